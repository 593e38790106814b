package pdptest

// Say is a shell function, to put before a test decider's script, that
// answers the persistent request line in $l: `say '{"allow":true}'`
// prints that object with the line's nonce echoed as its last key, as
// every persistent decider must. It uses builtins only. A line without a
// nonce gets "nonce":"".
const Say = `say() { n=${l##*'"nonce":"'}; v=$1; printf '%s,"nonce":"%s"}\n' "${v%?}" "${n%%[!0-9a-f]*}"; }; `
