package main

import (
	"fmt"
	"io"
	"strings"
)

// topic is what `arca help VERB` and `arca VERB -h` say of a verb beyond
// its synopsis and flags, and what the man page is made of.
type topic struct {
	about    string   // one paragraph
	examples []string // command lines, each with a comment after " # "
	exits    string   // the exit statuses it gives
}

const (
	vaultExits = "0 ok; 1 operation error (config, vault, audit file); 2 usage or bad request; 3 denied by a guardrail; 4 not found"
	plainExits = "0 ok; 1 operation error; 2 usage"
)

// topics are the verbs' help, by the name their usage line gives.
func topics() map[string]topic {
	return map[string]topic{
		"init": {"Create the age identity and the env's vault; an identity or vault that exists is kept. For a shared vault, init creates it on etcd, wrapped to this identity.",
			[]string{"arca init", "arca init --env prod --config team.toml # the shared vault of env prod"}, plainExits},
		"get": {"Print the value of the secret at REF, byte for byte: a newline is added only when stdout is a terminal. With --json, the value and its metadata as serve's get result.",
			[]string{"arca get arca://app/db", "arca get arca://prod/app/db > db.txt # the env pinned in the ref", "arca get --json arca://app/db | jq -r .version"}, vaultExits},
		"put": {"Store the value read from stdin at REF, exactly (no newline is stripped); at a terminal it is read without echo. Creates the record or replaces its value (version + 1).",
			[]string{"printf %s 'hunter2' | arca put arca://app/db", "arca put arca://app/tls-key < key.pem"}, vaultExits},
		"rotate": {"Replace the value of a secret that exists with the one read from stdin (version + 1, rotated_at set); a ref that is not stored is not found.",
			[]string{"openssl rand -hex 32 | arca rotate arca://app/api-token"}, vaultExits},
		"rm": {"Delete the secret at REF.", []string{"arca rm arca://app/old-token"}, vaultExits},
		"list": {"List the env's records, sorted by ref, never a value. PREFIX keeps a namespace (app), the start of a name (app/db) or a glob ('*/token'). In a pipe: one tab-separated line a record (ref, version, updated, rotated); on a terminal: a table.",
			[]string{"arca list", "arca list app", "arca list --env prod '*/token'", "arca list --json"}, vaultExits},
		"check": {"Probe the env's vault, or a backup file: the identity opens it, every record authenticates, files have safe modes. A problem found exits 1.",
			[]string{"arca check", "arca check backup.vault"}, "0 healthy; 1 a problem found, or an operation error; 2 usage"},
		"migrate": {"Bring secrets in from another tool's file (or stdin) as one batch: dotenv, JSON, YAML or sops output, Vault kv, arenzana/arca. Records that exist are skipped unless --overwrite; --dry-run writes nothing.",
			[]string{"arca migrate --from dotenv --ns app .env", "vault kv get -format=json secret/app | arca migrate --from vault --ns app", "arca migrate --from dotenv --ns app --dry-run .env"}, vaultExits},
		"export": {"Print an env's secrets (or one namespace's) as JSON or dotenv, for another tool. It refuses a terminal unless --terminal.",
			[]string{"arca export --format dotenv --ns app > app.env"}, vaultExits},
		"deploy": {"Render templates with secrets into the files programs read, as the config's [[deploy]] targets say (or one --template/--out): every secret is read first, a target is written atomically and only when it changed. --check exits 1 when a target would change.",
			[]string{"arca deploy", "arca deploy --check web", "arca deploy --template app.tmpl --out /etc/app.conf --mode 0600"}, vaultExits},
		"run": {"Run CMD with the allowlisted environment and the secrets it asks for: --secret NAME=REF as variables, --file NAME=REF as 0600 files, --env-file lines, NAME=arca://… of arca's environment resolved. --mask redacts values in its output. arca exits with CMD's status.",
			[]string{"arca run --secret DB_PASSWORD=arca://app/db -- ./server", "arca run --env-file app.env --mask -- make deploy"}, "CMD's status once it runs; before: 1 operation error (or CMD not found), 2 usage or bad request, 3 denied, 4 not found"},
		"env": {"Print the variables run would hand a command, as assignments for sh (eval), dotenv or JSON.",
			[]string{"eval \"$(arca env --secret DB_PASSWORD=arca://app/db)\""}, vaultExits},
		"serve": {"Serve the vault operations as newline-delimited JSON: one request a line on stdin, one response a line on stdout, one audit event a line on stderr (docs/protocol.md). Before an op that could reveal or change a secret it asks the configured policy decision point.",
			[]string{"arca serve --config /etc/arca/agent.toml"}, "0 at EOF or shutdown; 1 a stop signal, a failed pipe, or a config that cannot load; 2 usage or an unknown --env"},
		"schema": {"Print the JSON Schemas of the serve protocol: all of them keyed by name, or the one named. Each stands alone, with the $id urn:arca-serve:1:NAME.",
			[]string{"arca schema result.get", "arca schema | jq keys"}, plainExits},
		"vault": {"Manage a vault's keys and copies: who can open it (recipients), a new data key (rekey), a backup to one file and a restore from it.",
			[]string{"arca vault recipients add age1…", "arca vault rekey --env prod", "arca vault backup prod.vault --env prod"}, vaultExits},
		"vault recipients list": {"List the age public keys the env's data key is wrapped to.", []string{"arca vault recipients list --env prod"}, vaultExits},
		"vault recipients add":  {"Wrap the env's data key to more public keys as well: those identities can then open the vault.", []string{"arca vault recipients add --env prod age1…"}, vaultExits},
		"vault recipients rm":   {"Stop wrapping the data key to these keys. Run vault rekey after it, so a removed key cannot read what is stored.", []string{"arca vault recipients rm --env prod age1… && arca vault rekey --env prod"}, vaultExits},
		"vault rekey":           {"Make a new data key and re-seal every record under it, wrapped to the current recipients.", []string{"arca vault rekey --env prod"}, vaultExits},
		"vault backup":          {"Write the env's whole vault to FILE: one encrypted file that opens with the identity of any of its recipients.", []string{"arca vault backup --env prod prod.vault && arca check prod.vault # a backup, checked"}, vaultExits},
		"vault restore":         {"Write the records of a backup FILE into the env's vault, with their versions and times. Records that exist are skipped unless --overwrite; --dry-run writes nothing.", []string{"arca vault restore --dry-run prod.vault", "arca vault restore --overwrite prod.vault"}, vaultExits},
		"version":               {"Print arca's version and the serve protocol it speaks.", []string{"arca --version", "arca version --json"}, plainExits},
		"status": {"Show what is in effect: the config file and how it was found, the env and why, the audit file, and each env's vault, whether it opens, its identity, public key and recipients. Reads no value; not audited.",
			[]string{"arca status", "arca --config team.toml status --json"}, plainExits},
		"identity": {"Print the public key of the identity the env's vault opens with: what a teammate adds with vault recipients add. identity rotate replaces it.", []string{"arca identity", "arca identity --env prod --json"}, plainExits},
		"identity rotate": {"Replace the identity with a new one in every vault it opens: the new key is added to each, the old key removed and each vault re-keyed, then the new identity replaces the old file. Until then the old identity stays in place; a rotation that stops can be run again to carry on.",
			[]string{"arca identity rotate", "arca identity rotate --json"}, vaultExits},
		"ui": {"Serve a read-only web page on loopback: per env the records (never a value), the vault's health and recipients, and the audit trail with its chain. It prints the URL, with a token, and serves until interrupted.",
			[]string{"arca ui", "arca ui --addr 127.0.0.1:8080"}, plainExits},
		"audit": {"Show the audit trail: the CLI's audit file, or the FILEs given (a captured serve wire too), filtered by time, env, ref, op, outcome or actor; --follow prints events as they are appended. The subcommands verify the chain and print an anchor.",
			[]string{"arca audit --since 24h --outcome denied", "arca audit --json --ref 'app/*' | jq .actor", "arca audit --follow"}, plainExits},
		"audit verify": {"Check each FILE's chain (the CLI's audit file when none): every line's layout, seq and link. With --anchor SEQ:LINK the trail must still hold that event: a trail cut short or rewritten whole fails.",
			[]string{"arca audit verify", "arca audit verify --anchor \"$(cat anchor.txt)\" audit.log"}, "0 every chain holds; 1 one does not, or a file cannot be read; 2 usage"},
		"audit anchor": {"Print the anchor of FILE's last event (SEQ:LINK), to keep somewhere the trail's writer cannot reach and pass to audit verify --anchor later.",
			[]string{"arca audit anchor > anchor.txt"}, plainExits},
		"completion": {"Print a script that completes arca's verbs, flags and env names in bash, zsh or fish.",
			[]string{"source <(arca completion bash)", "arca completion zsh > \"${fpath[1]}/_arca\"", "arca completion fish > ~/.config/fish/completions/arca.fish"}, plainExits},
	}
}

// printTopic writes what name's topic says after its synopsis: the
// paragraph, then the flags (when flags prints them), the examples and
// the exit statuses.
func printTopic(w io.Writer, name string, flags func(io.Writer)) {
	t, ok := topics()[name]
	if ok {
		fmt.Fprintf(w, "\n%s\n", wrap(t.about, 76))
	}
	if flags != nil {
		fmt.Fprintln(w, "\nflags:")
		flags(w)
	}
	if !ok {
		return
	}
	if len(t.examples) > 0 {
		fmt.Fprintln(w, "\nexamples:")
		for _, e := range t.examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
	fmt.Fprintf(w, "\n%s\n", wrap("exit status: "+t.exits, 76))
}

// wrap breaks text into lines of at most width columns, at spaces.
func wrap(text string, width int) string {
	var b strings.Builder
	col := 0
	for i, word := range strings.Fields(text) {
		if i > 0 && col+1+len(word) > width {
			b.WriteByte('\n')
			col = 0
		} else if i > 0 {
			b.WriteByte(' ')
			col++
		}
		b.WriteString(word)
		col += len(word)
	}
	return b.String()
}
