package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// client is a tuned, pooled net/http client and the read concurrency.
type client struct {
	transport *http.Transport
	http      *http.Client
	slots     chan struct{}
}

// requestTimeout bounds one request, as the harness configures rmsd's
// [redfish] request_timeout_seconds (generous: a loaded machine queues).
const requestTimeout = 300 * time.Second

// connectTimeout bounds a connect and a TLS handshake, as the harness
// configures rmsd's [redfish] connect_timeout_seconds.
const connectTimeout = 120 * time.Second

// maxBody bounds a body read, as rmsd's.
const maxBody = 8 << 20

func newClient(concurrency int) *client {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true}, //nolint:gosec // simulated BMCs, as rmsd's default
		TLSHandshakeTimeout: connectTimeout,
		MaxIdleConns:        0, // no cap across hosts
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   false,
		ReadBufferSize:      512, // as rmsd's pool: small buffers per pooled connection
		WriteBufferSize:     512,
	}
	return &client{
		transport: tr,
		http:      &http.Client{Transport: tr},
		slots:     make(chan struct{}, max(1, concurrency)),
	}
}

func (c *client) close() { c.transport.CloseIdleConnections() }

// result is one batch read.
type result struct {
	took       time.Duration
	ok, failed int
}

// readPower reads every node's power state concurrently.
func (c *client) readPower(ctx context.Context, nodes []node) result {
	start := time.Now()
	var ok, failed atomic.Int64
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.slots <- struct{}{}
			defer func() { <-c.slots }()
			var err error
			if n.shelf {
				err = c.shelfPower(ctx, n)
			} else {
				err = c.systemPower(ctx, n)
			}
			if err != nil {
				failed.Add(1)
				return
			}
			ok.Add(1)
		}()
	}
	wg.Wait()
	return result{took: time.Since(start), ok: int(ok.Load()), failed: int(failed.Load())}
}

// systemPower is GET /redfish/v1/Systems/System_0.
func (c *client) systemPower(ctx context.Context, n node) error {
	var s struct {
		ID         string          `json:"Id"`
		PowerState json.RawMessage `json:"PowerState"`
	}
	if err := c.get(ctx, n, "/redfish/v1/Systems/System_0", &s); err != nil {
		return err
	}
	if s.ID != "System_0" {
		return fmt.Errorf("%s: system %q", n.base, s.ID)
	}
	return nil
}

type link struct {
	ID string `json:"@odata.id"`
}

// shelfPower walks a LiteOn shelf to its PSUs, as rmsd does.
func (c *client) shelfPower(ctx context.Context, n node) error {
	var col struct{ Members []link }
	if err := c.get(ctx, n, "/redfish/v1/Chassis", &col); err != nil {
		return err
	}
	chassis := ""
	for _, m := range col.Members {
		if strings.HasPrefix(strings.ToLower(path.Base(m.ID)), "powershelf") {
			chassis = m.ID
			break
		}
	}
	if chassis == "" {
		return errors.New("no power-shelf chassis")
	}
	var ch struct {
		PowerSubsystem link `json:"PowerSubsystem"`
	}
	if err := c.get(ctx, n, chassis, &ch); err != nil {
		return err
	}
	var sub struct {
		PowerSupplies link `json:"PowerSupplies"`
	}
	if err := c.get(ctx, n, ch.PowerSubsystem.ID, &sub); err != nil {
		return err
	}
	var psus struct{ Members []link }
	if err := c.get(ctx, n, sub.PowerSupplies.ID, &psus); err != nil {
		return err
	}
	for _, m := range psus.Members {
		var p struct {
			ID         string          `json:"Id"`
			PowerState json.RawMessage `json:"PowerState"`
		}
		if err := c.get(ctx, n, m.ID, &p); err != nil {
			return err
		}
	}
	return nil
}

// get is one authenticated GET whose JSON body is decoded into v.
func (c *client) get(ctx context.Context, n node, p string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.base+p, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(n.user, n.password)
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := readBody(resp)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s%s: HTTP %d", n.base, p, resp.StatusCode)
	}
	return json.Unmarshal(body, v)
}

// readBody reads a body as rmsd's hw/redfish does: one buffer of the
// announced length, or as it comes when chunked, at most maxBody bytes.
func readBody(resp *http.Response) ([]byte, error) {
	if n := resp.ContentLength; n >= 0 && n <= maxBody {
		body := make([]byte, n)
		if _, err := io.ReadFull(resp.Body, body); err != nil {
			return nil, err
		}
		return body, nil
	}
	return io.ReadAll(io.LimitReader(resp.Body, maxBody))
}
