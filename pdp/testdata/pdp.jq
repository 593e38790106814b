# arca PDP, persistent: one request in, one verdict out, per line.
# Each verdict echoes its request's nonce: arca takes no other line.
(if .actor == "agent:ci" and .op == "get" and .env == "dev"
 then {allow: true, reason: "agent:ci may read dev"}
 else {allow: false, reason: "only agent:ci may read, and only in dev"}
 end) + {nonce: .nonce}
