import { ariaDescribedByIds, type WidgetProps } from "@rjsf/utils";
import { useState } from "react";
import { zoneName } from "../../lib/format";
import { fromLocalText, toLocalText } from "../../lib/localTime";

/**
 * A schema's `date-time`, typed as the app writes times (`2026-01-05 09:30`) in the person's
 * zone, which is named beside it; the form holds the instant in UTC. (The browser's own control
 * shows `mm/dd/yyyy` in an en-US locale and no zone.) Text that is not a time is passed on as
 * typed, so the schema's check says what is wrong with it.
 */
export function DateTimeWidget(props: WidgetProps) {
  const { id, onChange, onBlur, onFocus, disabled, readonly, required } = props;
  const value: unknown = props.value;
  const [shown, setShown] = useState(() => ({ value, text: toLocalText(value) }));
  let text = shown.text;
  if (value !== shown.value) {
    // A value set from outside (a preset, the JSON tab, history) is shown in local time; the
    // one this field just sent keeps the text as typed.
    const sent = (fromLocalText(shown.text) ?? shown.text) === (value ?? "");
    text = sent ? shown.text : toLocalText(value);
    setShown({ value, text });
  }
  return (
    <span className="row datetime-field">
      <input
        id={id}
        type="text"
        value={text}
        placeholder="YYYY-MM-DD HH:MM"
        spellCheck={false}
        required={required}
        disabled={disabled}
        readOnly={readonly}
        aria-describedby={`${id}__zone ${ariaDescribedByIds(id)}`}
        onChange={(e) => {
          const typed = e.target.value.trim();
          const next = typed === "" ? undefined : (fromLocalText(typed) ?? typed);
          setShown({ value: next, text: e.target.value });
          onChange(next);
        }}
        onBlur={() => {
          onBlur(id, value);
        }}
        onFocus={() => {
          onFocus(id, value);
        }}
      />
      <span id={`${id}__zone`} className="muted">
        {zoneName()}
      </span>
    </span>
  );
}
