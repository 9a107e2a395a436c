"""Reads {"host": "...", "port": 443} as JSON on stdin; writes days_left and not_after."""

import json
import socket
import ssl
import sys
from datetime import datetime, timezone


def days_left(host, port=443):
    context = ssl.create_default_context()
    with socket.create_connection((host, port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname=host) as tls:
            not_after = tls.getpeercert()["notAfter"]
    expires = datetime.fromtimestamp(ssl.cert_time_to_seconds(not_after), tz=timezone.utc)
    return {"days_left": (expires - datetime.now(timezone.utc)).days, "not_after": expires.isoformat()}


if __name__ == "__main__":
    args = json.load(sys.stdin)
    json.dump(days_left(args["host"], args.get("port", 443)), sys.stdout)
