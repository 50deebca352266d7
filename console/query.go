package console

import "net/url"

// urlQuery escapes a value for a query string.
func urlQuery(s string) string { return url.QueryEscape(s) }
