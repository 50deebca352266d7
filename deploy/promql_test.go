package deploy

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
)

// promqlKeywords are the PromQL words that are not metric names: binary
// operators, modifiers, literals and aggregation operators (which may be
// followed by a by/without clause before their parenthesis). A grouping keyword's parenthesised
// label list is skipped with it (groupingKeywords).
var promqlKeywords = map[string]bool{
	"and": true, "or": true, "unless": true, "bool": true, "offset": true,
	"inf": true, "nan": true,
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
	"limitk": true, "limit_ratio": true,
}

var groupingKeywords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
}

// promqlMetricNames returns the metric names a PromQL expression selects,
// in order: identifiers that are not functions or aggregations (followed
// by "("), keywords, label names (inside {...} or a by/without/on/
// ignoring/group_* list), strings, numbers, durations or Grafana
// variables ($name, ${name}, $__rate_interval).
func promqlMetricNames(expr string) ([]string, error) {
	var names []string
	isIdentStart := func(c byte) bool { return c == '_' || c == ':' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
	isIdent := func(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }
	// skipBalanced returns the index after the bracket closing the one at
	// i, stepping over strings.
	skipBalanced := func(i int, open, closing byte) (int, error) {
		depth := 0
		for ; i < len(expr); i++ {
			switch c := expr[i]; c {
			case '"', '\'', '`':
				end := skipString(expr, i)
				if end < 0 {
					return 0, fmt.Errorf("unterminated string in %q", expr)
				}
				i = end - 1
			case open:
				depth++
			case closing:
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
		}
		return 0, fmt.Errorf("unbalanced %c in %q", open, expr)
	}
	nextNonSpace := func(i int) int {
		for i < len(expr) && (expr[i] == ' ' || expr[i] == '\t' || expr[i] == '\n') {
			i++
		}
		return i
	}
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			end := skipString(expr, i)
			if end < 0 {
				return nil, fmt.Errorf("unterminated string in %q", expr)
			}
			i = end
		case c == '{':
			end, err := skipBalanced(i, '{', '}')
			if err != nil {
				return nil, err
			}
			i = end
		case c == '[':
			end, err := skipBalanced(i, '[', ']')
			if err != nil {
				return nil, err
			}
			i = end
		case c == '$':
			i++
			if i < len(expr) && expr[i] == '{' {
				end, err := skipBalanced(i, '{', '}')
				if err != nil {
					return nil, err
				}
				i = end
				continue
			}
			for i < len(expr) && isIdent(expr[i]) {
				i++
			}
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(expr) && expr[i+1] >= '0' && expr[i+1] <= '9':
			// A number or a duration: 0.99, 1e3, 0x1f, 5m, 1h30m.
			for i < len(expr) && (isIdent(expr[i]) || expr[i] == '.') {
				i++
			}
		case isIdentStart(c):
			start := i
			for i < len(expr) && isIdent(expr[i]) {
				i++
			}
			word := expr[start:i]
			next := nextNonSpace(i)
			switch lower := strings.ToLower(word); {
			case groupingKeywords[lower]:
				if next < len(expr) && expr[next] == '(' {
					end, err := skipBalanced(next, '(', ')')
					if err != nil {
						return nil, err
					}
					i = end
				}
			case promqlKeywords[lower]:
			case next < len(expr) && expr[next] == '(':
				// A function or an aggregation; its arguments follow.
			default:
				names = append(names, word)
			}
		default:
			i++
		}
	}
	return names, nil
}

// skipString returns the index after the string literal opening at i, or
// -1 if it is not closed. Backquoted strings have no escapes.
func skipString(s string, i int) int {
	quote := s[i]
	for j := i + 1; j < len(s); j++ {
		switch {
		case s[j] == '\\' && quote != '`':
			j++
		case s[j] == quote:
			return j + 1
		}
	}
	return -1
}

// registryFamilies reads the families rmsd's registry exports, which the
// metrics package's own test keeps true to the registry
// (cmd/internal/metrics/testdata/families.txt).
func registryFamilies(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open("../cmd/internal/metrics/testdata/families.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, typ, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			t.Fatalf("families file line %q", sc.Text())
		}
		out[name] = typ
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) < 10 {
		t.Fatalf("only %d families listed", len(out))
	}
	return out
}

// unknownMetric returns why name, as a query selects it, is not a series
// rmsd exports ("" when it is): a family, a histogram's _bucket, _count or
// _sum, or Prometheus's own up.
func unknownMetric(families map[string]string, name string) string {
	if name == "up" {
		return ""
	}
	if _, ok := families[name]; ok {
		return ""
	}
	for _, suffix := range []string{"_bucket", "_count", "_sum"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			switch families[base] {
			case "histogram":
				return ""
			case "":
			default:
				return fmt.Sprintf("%s is a %s, which has no %s series", base, families[base], suffix)
			}
		}
	}
	return name + " is not a family rmsd exports"
}

func TestPromQLMetricNames(t *testing.T) {
	for expr, want := range map[string]string{
		`up{job="rms-api-server"} == 0 or absent(up{job="x"})`:                                             "up up",
		`sum by (method, le) (rate(rms_grpc_server_handling_seconds_bucket{job=~"$job", code!="OK"}[5m]))`: "rms_grpc_server_handling_seconds_bucket",
		`histogram_quantile(0.99, sum(rate(a_bucket[$__rate_interval])) without (instance))`:               "a_bucket",
		`max(x) > 0 and on() time() - max(y offset 1h30m) > 1200`:                                          "x y",
		`a / ignoring(code) group_left(method) b * 1e3 + .5`:                                               "a b",
		`label_replace(c, "dst", "$1", "src", "(.*)")`:                                                     "c",
		`(d{l="}"} - time()) / 86400 < ${days} * 86400`:                                                    "d",
		`sum(rate(e[5m] @ end())) BY (k) > bool 0`:                                                         "e",
	} {
		got, err := promqlMetricNames(expr)
		if err != nil {
			t.Errorf("%s: %v", expr, err)
			continue
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%s: metric names %q, want %q", expr, got, want)
		}
	}
	if _, err := promqlMetricNames(`sum(rate(x{job="a}[5m]))`); err == nil {
		t.Error("an unterminated string gave no error")
	}
	families := map[string]string{"h": "histogram", "c": "counter"}
	for name, ok := range map[string]bool{"h": true, "h_bucket": true, "h_count": true, "c": true, "c_bucket": false, "nope": false, "up": true} {
		if why := unknownMetric(families, name); (why == "") != ok {
			t.Errorf("unknownMetric(%s) = %q, want known %v", name, why, ok)
		}
	}
}
