"""Python helpers behind acme-ops tools."""
