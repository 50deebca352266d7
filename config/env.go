package config

import (
	"fmt"
	"strings"
)

// EnvAllowInsecure is the environment variable that must equal "1", in
// addition to [tls] insecure = true, for rmsd to serve plaintext gRPC.
const EnvAllowInsecure = "RMS_ALLOW_INSECURE"

// EnvDatabaseURL overrides [postgres] db_url, as in upstream RMS.
const EnvDatabaseURL = "DATABASE_URL"

// envPrefix starts every override variable; what follows it names the key,
// with "__" between a section and its key: RMS_<SECTION>__<KEY> for a key
// in a section, RMS__<KEY> for a top-level key.
const (
	envPrefix    = "RMS_"
	envSeparator = "__"
)

// envOverrides maps override variables to dotted keys for koanf's env
// provider. Only variables with a double underscore after RMS_ are
// overrides: Kubernetes service links (RMS_PORT=tcp://..., RMS_SERVICE_HOST,
// RMS_PORT_8801_TCP) and other tools' settings (RMS_API_URL,
// RMS_ROOT_CA_PATH) share the prefix and are ignored.
type envOverrides struct {
	// origins maps a dotted key to the variable that set it, so that
	// problems with the value can name the variable.
	origins map[string]string
	// invalid describes the override variables that name no key at all.
	invalid []string
}

// key is the env provider's transform function: it returns the dotted key
// a variable overrides, or "" to ignore the variable.
func (o *envOverrides) key(name, value string) (string, any) {
	if name == EnvDatabaseURL {
		if value == "" {
			// Set but empty, as container environments often leave it:
			// not a URL, so [postgres] db_url stands. Overriding it with ""
			// would move a PostgreSQL daemon's state to a new SQLite file.
			return "", nil
		}
		o.origins["postgres.db_url"] = name
		return "postgres.db_url", value
	}
	rest, ok := strings.CutPrefix(name, envPrefix)
	if !ok {
		return "", nil
	}
	var segments []string
	if top, ok := strings.CutPrefix(rest, "_"); ok {
		segments = []string{top}
		if strings.Contains(top, envSeparator) {
			o.invalid = append(o.invalid, fmt.Sprintf("%s: RMS__<KEY> names a top-level key; a key in a section is RMS_<SECTION>__<KEY>", name))
			return "", nil
		}
	} else if strings.Contains(rest, envSeparator) {
		segments = strings.Split(rest, envSeparator)
	} else {
		return "", nil
	}
	for _, s := range segments {
		if s == "" {
			o.invalid = append(o.invalid, fmt.Sprintf("%s: names no configuration key", name))
			return "", nil
		}
	}
	key := strings.ToLower(strings.Join(segments, "."))
	o.origins[key] = name
	return key, value
}
