package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rmsd/rmsd/config"
)

// Key is one configuration key as the reference lists it.
type Key struct {
	Section string // "" for a top-level key
	Name    string // the koanf tag
	Type    string // TOML type
	Default string // as it would be written in TOML, or "unset"/"empty"
	Env     []string
	Own     bool   // rmsd's own key rather than upstream's
	Meaning string // from the doc comment
}

// Dotted is the key's dotted path, as configuration errors name it.
func (k Key) Dotted() string {
	if k.Section == "" {
		return k.Name
	}
	return k.Section + "." + k.Name
}

// Section is one TOML table of the configuration.
type Section struct {
	Name   string // "" for the top level
	GoType string // the struct type of the table
	Doc    string
	Keys   []Key
}

// source holds the doc comments of the config package's struct types.
type source struct {
	typeDocs  map[string]string
	fieldDocs map[string]map[string]string // type name -> field name -> doc
}

// parseSource reads the doc comments of every struct type in dir's
// non-test Go files.
func parseSource(dir string) (*source, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	s := &source{typeDocs: map[string]string{}, fieldDocs: map[string]map[string]string{}}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", name, err)
		}
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.TYPE {
				continue
			}
			for _, spec := range gen.Specs {
				ts := spec.(*ast.TypeSpec)
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				doc := ts.Doc
				if doc == nil && len(gen.Specs) == 1 {
					doc = gen.Doc
				}
				s.typeDocs[ts.Name.Name] = oneLine(doc.Text())
				fields := map[string]string{}
				for _, fl := range st.Fields.List {
					text := fl.Doc.Text()
					if text == "" {
						text = fl.Comment.Text()
					}
					for _, n := range fl.Names {
						fields[n.Name] = oneLine(text)
					}
				}
				s.fieldDocs[ts.Name.Name] = fields
			}
		}
	}
	if _, ok := s.fieldDocs["Config"]; !ok {
		return nil, fmt.Errorf("no Config struct in %s", dir)
	}
	return s, nil
}

// Collect lists every configuration key by section, in the order of the
// struct fields, with the defaults of config.Default. It fails on a field
// without a doc comment or a koanf tag.
func Collect(dir string) ([]Section, error) {
	src, err := parseSource(dir)
	if err != nil {
		return nil, err
	}
	var problems []string
	top := Section{Doc: "Keys outside any table."}
	var sections []Section
	def := reflect.ValueOf(config.Default()).Elem()
	rt := def.Type()
	for i := range rt.NumField() {
		f := rt.Field(i)
		tag := f.Tag.Get("koanf")
		if tag == "" {
			problems = append(problems, fmt.Sprintf("Config.%s has no koanf tag", f.Name))
			continue
		}
		if f.Type.Kind() != reflect.Struct {
			k, err := src.key("Config", "", f, def.Field(i), false)
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			top.Keys = append(top.Keys, k)
			continue
		}
		typeName := f.Type.Name()
		doc := src.typeDocs[typeName]
		if doc == "" {
			problems = append(problems, fmt.Sprintf("type %s has no doc comment", typeName))
		}
		sec := Section{Name: tag, GoType: typeName, Doc: doc}
		own := strings.Contains(doc, "rmsd's own section")
		for j := range f.Type.NumField() {
			sf := f.Type.Field(j)
			k, err := src.key(typeName, tag, sf, def.Field(i).Field(j), own)
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			sec.Keys = append(sec.Keys, k)
		}
		sections = append(sections, sec)
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("config reference: %s", strings.Join(problems, "; "))
	}
	return append([]Section{top}, sections...), nil
}

func (s *source) key(typeName, section string, f reflect.StructField, def reflect.Value, ownSection bool) (Key, error) {
	tag := f.Tag.Get("koanf")
	if tag == "" {
		return Key{}, fmt.Errorf("%s.%s has no koanf tag", typeName, f.Name)
	}
	doc := s.fieldDocs[typeName][f.Name]
	if doc == "" {
		return Key{}, fmt.Errorf("%s.%s (%s) has no doc comment", typeName, f.Name, join(section, tag))
	}
	k := Key{Section: section, Name: tag, Own: ownSection || strings.Contains(doc, "rmsd's own key"),
		Meaning: meaning(f.Name, doc)}
	switch f.Type.Kind() {
	case reflect.String:
		k.Type = "string"
		if def.String() == "" {
			k.Default = "unset"
		} else {
			k.Default = strconv.Quote(def.String())
		}
	case reflect.Bool:
		k.Type, k.Default = "boolean", strconv.FormatBool(def.Bool())
	case reflect.Int, reflect.Int64:
		k.Type, k.Default = "integer", strconv.FormatInt(def.Int(), 10)
	case reflect.Float64:
		k.Type, k.Default = "float", strconv.FormatFloat(def.Float(), 'g', -1, 64)
	case reflect.Map:
		k.Type, k.Default = "table", "empty"
		if def.Len() > 0 {
			return Key{}, fmt.Errorf("%s.%s: a non-empty default table cannot be rendered", typeName, f.Name)
		}
		return k, nil // tables have no environment override
	case reflect.Slice:
		if f.Type.Elem().Kind() != reflect.Struct {
			return Key{}, fmt.Errorf("%s.%s: only arrays of tables are supported", typeName, f.Name)
		}
		k.Type, k.Default = "array of tables", "empty"
		if def.Len() > 0 {
			return Key{}, fmt.Errorf("%s.%s: a non-empty default array cannot be rendered", typeName, f.Name)
		}
		return k, nil
	default:
		return Key{}, fmt.Errorf("%s.%s: unsupported kind %s", typeName, f.Name, f.Type.Kind())
	}
	k.Env = []string{EnvVar(section, tag)}
	if join(section, tag) == "postgres.db_url" {
		k.Env = append(k.Env, config.EnvDatabaseURL)
	}
	return k, nil
}

// EnvVar is the environment variable that overrides a key: RMS__<KEY> for a
// top-level key, RMS_<SECTION>__<KEY> for a key in a section.
func EnvVar(section, key string) string {
	if section == "" {
		return "RMS__" + strings.ToUpper(key)
	}
	return "RMS_" + strings.ToUpper(section) + "__" + strings.ToUpper(key)
}

func join(section, key string) string {
	if section == "" {
		return key
	}
	return section + "." + key
}

// oneLine joins a comment's lines into one paragraph.
func oneLine(text string) string {
	return strings.Join(strings.Fields(text), " ")
}

// meaning turns a Go doc comment ("Port is the gRPC port ...") into the
// reference's wording ("The gRPC port ...").
func meaning(goName, doc string) string {
	rest, ok := strings.CutPrefix(doc, goName+" ")
	if !ok {
		return doc
	}
	for _, verb := range []string{"is ", "are "} {
		if r, ok := strings.CutPrefix(rest, verb); ok {
			rest = r
			break
		}
	}
	r, size := utf8.DecodeRuneInString(rest)
	return string(unicode.ToUpper(r)) + rest[size:]
}

// Render produces the whole reference document.
func Render(dir string) ([]byte, error) {
	sections, err := Collect(dir)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(header)
	for _, sec := range sections {
		if sec.Name == "" {
			b.WriteString("\n## Top level\n\n")
		} else {
			fmt.Fprintf(&b, "\n## [%s]\n\n", sec.Name)
		}
		fmt.Fprintf(&b, "%s\n\n", cell(meaning(sec.GoType, sec.Doc)))
		b.WriteString("| Key | Type | Default | Environment | Origin | Meaning |\n")
		b.WriteString("| --- | --- | --- | --- | --- | --- |\n")
		for _, k := range sec.Keys {
			env := "file only"
			if len(k.Env) > 0 {
				env = "`" + strings.Join(k.Env, "`, `") + "`"
			}
			origin := "upstream"
			if k.Own {
				origin = "rmsd"
			}
			def := k.Default
			if def != "unset" && def != "empty" {
				def = "`" + def + "`"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", k.Name, k.Type, def, env, origin, cell(k.Meaning))
		}
	}
	return b.Bytes(), nil
}

// cell escapes text for a Markdown table cell: pipes everywhere, and
// angle brackets outside code spans, so that <placeholders> stay visible.
func cell(s string) string {
	var b strings.Builder
	code := false
	for _, r := range s {
		switch {
		case r == '`':
			code = !code
			b.WriteRune(r)
		case r == '|':
			b.WriteString(`\|`)
		case r == '<' && !code:
			b.WriteString("&lt;")
		case r == '>' && !code:
			b.WriteString("&gt;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

const header = `# Configuration reference

<!-- Generated by config/internal/configdoc from the config package; do not edit.
     Regenerate with: go generate ./config -->

Every key rmsd reads from its TOML file (` + "`--config PATH`" + `, default
` + "`/etc/rms/config.toml`" + `), generated from the configuration struct and its doc
comments. Every key is optional. **Environment** names the variable that overrides the
key (its value is parsed as the key's type; booleans as ` + "`true`/`false`/`1`/`0`" + `).
**Origin** says whether the key is upstream RMS's (same name and default) or rmsd's own.
How the file, the environment and the defaults combine is explained in
[operations.md](operations.md#configuration).
`
