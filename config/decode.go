package config

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// decoder copies a raw key tree (from the TOML file and the environment)
// into a Config, collecting a problem for every unknown key and every value
// of the wrong type instead of stopping at the first.
type decoder struct {
	origins  map[string]string // dotted key -> environment variable that set it
	problems []string
}

func (d *decoder) addf(format string, args ...any) {
	d.problems = append(d.problems, fmt.Sprintf(format, args...))
}

// where names a key for an error message, with the variables that set it
// or, for a table, keys in it.
func (d *decoder) where(path string) string {
	var names []string
	for key, name := range d.origins {
		if key == path || strings.HasPrefix(key, path+".") {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return path
	}
	sort.Strings(names)
	return fmt.Sprintf("%s (from %s)", path, strings.Join(names, ", "))
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// decodeStruct decodes raw into the struct pointed to by target.
func (d *decoder) decodeStruct(prefix string, raw map[string]any, target any) {
	v := reflect.ValueOf(target).Elem()
	fields := map[string]reflect.Value{}
	for i := 0; i < v.NumField(); i++ {
		fields[v.Type().Field(i).Tag.Get("koanf")] = v.Field(i)
	}
	for _, key := range sortedKeys(raw) {
		path := join(prefix, key)
		field, ok := fields[key]
		if !ok {
			d.addf("unknown key %q", d.where(path))
			continue
		}
		d.decodeValue(path, raw[key], field)
	}
}

func (d *decoder) decodeValue(path string, val any, field reflect.Value) {
	_, fromEnv := d.origins[path]
	switch field.Kind() {
	case reflect.Struct:
		sub, ok := val.(map[string]any)
		if !ok {
			d.addf("%s: expected a table, got %s", d.where(path), describe(val))
			return
		}
		d.decodeStruct(path, sub, field.Addr().Interface())
	case reflect.Map:
		sub, ok := val.(map[string]any)
		if !ok {
			d.addf("%s: expected a table, got %s", d.where(path), describe(val))
			return
		}
		if field.Type() == reflect.TypeOf(map[string]AuthzRole(nil)) {
			field.Set(reflect.ValueOf(d.decodeRoles(path, sub)))
			return
		}
		field.Set(reflect.ValueOf(d.decodeProfiles(path, sub)))
	case reflect.Slice:
		if field.Type() != reflect.TypeOf([]AuthzBinding(nil)) {
			d.addf("%s: unsupported configuration field type %s", path, field.Type())
			return
		}
		field.Set(reflect.ValueOf(d.decodeBindings(path, val)))
	case reflect.String:
		s, ok := val.(string)
		if !ok {
			d.addf("%s: expected a string, got %s", d.where(path), describe(val))
			return
		}
		field.SetString(s)
	case reflect.Bool:
		b, ok := val.(bool)
		if s, isStr := val.(string); isStr && fromEnv {
			var err error
			b, err = strconv.ParseBool(s)
			ok = err == nil
		}
		if !ok {
			d.addf("%s: expected a boolean, got %s", d.where(path), describe(val))
			return
		}
		field.SetBool(b)
	case reflect.Int, reflect.Int64:
		n, ok := asInt(val, fromEnv)
		if !ok {
			d.addf("%s: expected an integer, got %s", d.where(path), describe(val))
			return
		}
		field.SetInt(n)
	case reflect.Float64:
		f, ok := asFloat(val, fromEnv)
		if !ok {
			d.addf("%s: expected a number, got %s", d.where(path), describe(val))
			return
		}
		field.SetFloat(f)
	default:
		d.addf("%s: unsupported configuration field kind %s", path, field.Kind())
	}
}

func asInt(val any, fromEnv bool) (int64, bool) {
	switch n := val.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case string:
		if !fromEnv {
			return 0, false
		}
		i, err := strconv.ParseInt(strings.TrimSpace(n), 10, 64)
		return i, err == nil
	}
	return 0, false
}

func asFloat(val any, fromEnv bool) (float64, bool) {
	switch n := val.(type) {
	case float64:
		return n, !math.IsNaN(n)
	case int64:
		return float64(n), true
	case string:
		if !fromEnv {
			return 0, false
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
		return f, err == nil && !math.IsNaN(f)
	}
	return 0, false
}

// describe names the TOML type of a value for error messages, without
// echoing the value itself (it may be a secret such as a database URL).
func describe(val any) string {
	switch val.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, int:
		return "an integer"
	case float64:
		return "a float"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	default:
		return fmt.Sprintf("a %T", val)
	}
}
