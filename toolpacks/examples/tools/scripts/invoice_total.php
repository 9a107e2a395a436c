<?php
// Reads {"lines": [...], "tax_rate_percent": 20} as JSON on stdin; writes subtotal, tax, total.
// Amounts are integer cents; tax is rounded half up, as the billing rules require.

$input = json_decode(stream_get_contents(STDIN), true, 32, JSON_THROW_ON_ERROR);
$rate = $input['tax_rate_percent'] ?? 20;
$currency = $input['lines'][0]['unit_price']['currency'];
$subtotal = 0;
foreach ($input['lines'] as $line) {
    if ($line['unit_price']['currency'] !== $currency) {
        fwrite(STDERR, "all lines must use the same currency\n");
        exit(1);
    }
    $subtotal += $line['quantity'] * $line['unit_price']['cents'];
}
$tax = (int) round($subtotal * $rate / 100, 0, PHP_ROUND_HALF_UP);
$money = fn (int $cents) => ['currency' => $currency, 'cents' => $cents];
echo json_encode(['subtotal' => $money($subtotal), 'tax' => $money($tax), 'total' => $money($subtotal + $tax)]);
