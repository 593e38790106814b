package secretfile

import (
	"bytes"
	"errors"
)

// ErrSopsEncrypted is Parse's error for an input that sops encrypted and
// nobody decrypted: its values are ciphertexts (ENC[AES256_GCM,…]), which
// would otherwise be stored as secrets, or refused for a reason that does
// not say what to do.
var ErrSopsEncrypted = errors.New("the input is sops-encrypted")

// sopsEncrypted reports whether data is what sops writes for an encrypted
// file, in any of its formats: a value ENC[AES256_GCM,data:…], or the
// metadata sops adds (a dotenv's sops_mac= line, a YAML's top-level
// sops: mapping, a JSON's "sops" object with its "mac").
func sopsEncrypted(data []byte) bool {
	if bytes.Contains(data, []byte("ENC[AES256_GCM,data:")) {
		return true
	}
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if bytes.HasPrefix(line, []byte("sops_mac=")) || bytes.Equal(line, []byte("sops:")) {
			return true
		}
	}
	return bytes.Contains(data, []byte(`"sops"`)) && bytes.Contains(data, []byte(`"mac"`)) && bytes.Contains(data, []byte(`"lastmodified"`))
}
