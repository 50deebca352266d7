package sqlstore

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/store/storetest"
)

const secret = "hunter2"

func TestPostgresOpenErrorsHideThePassword(t *testing.T) {
	tests := []struct {
		name, url, want string
	}{
		{"unreachable", "postgres://rms:" + secret + "@127.0.0.1:1/rms?sslmode=disable&connect_timeout=5", "connect to PostgreSQL at host=127.0.0.1:1 database=rms"},
		{"not a URL", "postgres://rms:" + secret + "@[::1/rms", "cannot be parsed"},
		{"bad option", "postgres://rms:" + secret + "@db/rms?sslmode=sometimes", "cannot be parsed"},
		{"key=value with a bad port", "host=db port=x user=rms password=" + secret, "cannot be parsed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := OpenPostgres(t.Context(), tt.url, 2, Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("open = %v, want an error containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
	if _, err := OpenPostgres(t.Context(), "postgres://db/rms", 0, Options{}); err == nil {
		t.Error("a pool of 0 connections opened")
	}
}

func TestPostgresInfoAndPool(t *testing.T) {
	u, err := url.Parse(storetest.TempPostgresDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), secret) // the test server trusts; the password goes unused
	s, err := OpenPostgres(t.Context(), u.String(), 3, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := fmt.Sprintf("host=%s database=%s", u.Host, strings.TrimPrefix(u.Path, "/"))
	if got := s.Info(); got.Engine != "postgres" || got.Location != want || got.SchemaVersion < 2 {
		t.Errorf("info = %+v, want location %q", got, want)
	}
	if loc := s.Info().Location; strings.Contains(loc, secret) || strings.Contains(loc, u.User.Username()) {
		t.Errorf("location %q names the user or password", loc)
	}
	if got := s.write.Stats().MaxOpenConnections; got != 3 {
		t.Errorf("pool of %d connections, want [postgres] db_pool_max 3", got)
	}
}

func TestRedact(t *testing.T) {
	base := errors.New("dial rms:hunter2@db failed")
	tests := []struct {
		name, secret, want string
	}{
		{"secret present", secret, "dial rms:[REDACTED]@db failed"},
		{"secret absent", "other", "dial rms:hunter2@db failed"},
		{"no secret", "", "dial rms:hunter2@db failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := redact(base, tt.secret)
			if got.Error() != tt.want || !errors.Is(got, base) {
				t.Errorf("redact = %q (wraps base: %v), want %q", got, errors.Is(got, base), tt.want)
			}
		})
	}
}
