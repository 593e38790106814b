package arca

# An undefined decision must never allow. This default makes every
# request that no rule allows a deny.
default allow := false

default reason := "no rule allows this"

allow if {
	input.actor == "agent:ci"
	input.op == "get"
	input.env == "dev"
}

reason := "agent:ci may read dev" if allow

decision := {"allow": allow, "reason": reason}
