package sim_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim"
)

func TestFleet_DefaultRackIsGB200NVL72WithNVOSHosts(t *testing.T) {
	f := start(t, sim.Options{})
	nodes := f.Nodes()
	count := map[hw.Kind]int{}
	ips := map[string]bool{}
	for _, n := range nodes {
		count[n.Type.Kind()]++
		if n.RackID != "rack-001" || !strings.HasPrefix(n.ID, "rack-001-") {
			t.Fatalf("node %s in rack %s", n.ID, n.RackID)
		}
		ip := net.ParseIP(n.BMC.IP)
		if ip == nil || !ip.IsLoopback() || ips[n.BMC.IP] {
			t.Fatalf("node %s: bmc ip %q not a fresh loopback address", n.ID, n.BMC.IP)
		}
		ips[n.BMC.IP] = true
		if n.BMC.Port == 0 || n.BMC.Credentials.Password.IsZero() || n.BMC.MAC == "" {
			t.Fatalf("node %s: incomplete bmc endpoint %+v", n.ID, n.BMC)
		}
		if n.Type.Kind() == hw.KindSwitch {
			if n.Switch == nil || n.Host.IP == "" || ips[n.Host.IP] {
				t.Fatalf("switch %s: host endpoint %+v", n.ID, n.Host)
			}
			ips[n.Host.IP] = true
		} else if n.Switch != nil {
			t.Fatalf("%s has an NVOS host", n.ID)
		}
	}
	if count[hw.KindCompute] != 18 || count[hw.KindSwitch] != 9 || count[hw.KindPowerShelf] != 8 {
		t.Fatalf("rack make-up %v, want 18 compute, 9 switch, 8 shelves", count)
	}
	if nodes[0].BMC.IP != fmt.Sprintf("127.%d.0.1", testNetwork) || nodes[0].Type != hw.ComputeGB200Nvidia {
		t.Fatalf("first node %s at %s", nodes[0].ID, nodes[0].BMC.IP)
	}

	// The NVOS host of a switch tray answers NVUE with the fleet credentials.
	var sw sim.Node
	for _, n := range nodes {
		if n.Type.Kind() == hw.KindSwitch {
			sw = n
			break
		}
	}
	if code := nvueStatus(t, sw.Host); code != http.StatusOK {
		t.Fatalf("nvue /system = %d", code)
	}
}

func nvueStatus(t *testing.T, ep hw.Endpoint) int {
	t.Helper()
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // simulator
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodGet, "https://"+ep.Addr(443)+"/nvue_v1/system", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(ep.Credentials.Username, ep.Credentials.Password.Reveal())
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestFleet_AddressesAreDeterministic(t *testing.T) {
	o := sim.Options{Racks: 2, Layout: sim.Layout{Compute: 2, Switches: 1, Shelves: 1}, NoSwitchHosts: true}
	first := start(t, o)
	var a []string
	for _, n := range first.Nodes() {
		a = append(a, n.ID+"@"+n.BMC.IP+"/"+n.BMC.MAC)
	}
	first.Close()
	second := start(t, o)
	for i, n := range second.Nodes() {
		if got := n.ID + "@" + n.BMC.IP + "/" + n.BMC.MAC; got != a[i] {
			t.Fatalf("node %d: %s, first run %s", i, got, a[i])
		}
	}
	if n := second.Nodes()[4]; n.RackID != "rack-002" || n.BMC.IP != fmt.Sprintf("127.%d.1.1", testNetwork) {
		t.Fatalf("rack 2 first node %s at %s", n.ID, n.BMC.IP)
	}
}

func TestFleet_InvalidOptions(t *testing.T) {
	for name, o := range map[string]sim.Options{
		"too many devices": {Layout: sim.Layout{Compute: 250, Shelves: 10}},
		"negative scale":   {TimeScale: -1},
		"wrong kind":       {Layout: sim.Layout{Compute: 1, ComputeType: hw.SwitchGB200Nvidia}},
	} {
		t.Run(name, func(t *testing.T) {
			o.Network = testNetwork
			_, err := sim.Start(context.Background(), o)
			if !errors.Is(err, sim.ErrInvalidOptions) {
				t.Fatalf("err = %v, want ErrInvalidOptions", err)
			}
		})
	}
}

func TestFleet_PortInUseFailsCleanly(t *testing.T) {
	ip := fmt.Sprintf("127.%d.0.1", testNetwork)
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	_, err = sim.Start(context.Background(), sim.Options{Layout: sim.Layout{Compute: 2}, Port: port,
		NoSwitchHosts: true, Network: testNetwork})
	if err == nil || !strings.Contains(err.Error(), "listen") {
		t.Fatalf("err = %v, want a listen error", err)
	}
	// goleak in TestMain proves the partial fleet was torn down.
}

func TestFleet_CertificatesVerifyAgainstFleetCA(t *testing.T) {
	f := start(t, sim.Options{Layout: sim.Layout{Compute: 1}, NoSwitchHosts: true})
	p := redfish.NewPool(redfish.Options{VerifyTLS: true, RootCAs: f.CertPool()})
	defer p.Close()
	c, err := p.Client(f.Nodes()[0].BMC)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SystemPowerState(testCtx(t)); err != nil {
		t.Fatalf("verified TLS: %v", err)
	}
	// Without the CA, verification fails: the certificate is self-issued.
	strict := redfish.NewPool(redfish.Options{VerifyTLS: true, RootCAs: nil})
	defer strict.Close()
	c2, _ := strict.Client(f.Nodes()[0].BMC)
	if _, err := c2.SystemPowerState(testCtx(t)); !errors.Is(err, redfish.ErrTransport) {
		t.Fatalf("unverifiable certificate: err = %v, want ErrTransport", err)
	}
}

// NVOS hosts get their certificates from the fleet CA too: an NVUE client
// verifying against Fleet.CertPool reaches a switch by its host name (the
// node id) and by its bare IP.
func TestFleet_NVOSCertificatesVerifyAgainstFleetCA(t *testing.T) {
	f := start(t, sim.Options{Layout: sim.Layout{Switches: 2}})
	pool, err := nvue.NewPool(nvue.Options{TLS: nvue.TLSVerify, RootCAs: f.CertPool(), RequestTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	for _, n := range f.Nodes() {
		byIP := n.Host
		byIP.HostName = ""
		for _, ep := range []hw.Endpoint{n.Host, byIP} {
			c, err := pool.Client(ep)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.System(testCtx(t)); err != nil {
				t.Fatalf("%s (host name %q): verified NVUE: %v", n.ID, ep.HostName, err)
			}
		}
	}
}

// Every NVOS host of a fleet listens on one NVUE port, as real switches
// do, even when the port is left to the system.
func TestFleet_NVOSHostsShareOneNVUEPort(t *testing.T) {
	f := start(t, sim.Options{Racks: 2, Layout: sim.Layout{Compute: 1, Switches: 3}})
	port := f.NVUEPort()
	if port == 0 {
		t.Fatal("no shared NVUE port")
	}
	hosts := 0
	for _, n := range f.Nodes() {
		if n.Switch == nil {
			continue
		}
		hosts++
		if n.Host.Port != port {
			t.Errorf("%s: NVUE on %d, fleet port %d", n.ID, n.Host.Port, port)
		}
	}
	if hosts != 6 {
		t.Fatalf("%d NVOS hosts, want 6", hosts)
	}
	if none := start(t, sim.Options{Layout: sim.Layout{Compute: 1}, NoSwitchHosts: true}); none.NVUEPort() != 0 ||
		none.SSHPort() != 0 {
		t.Errorf("fleet without hosts: NVUEPort %d, SSHPort %d, want 0", none.NVUEPort(), none.SSHPort())
	}
}

// NVOS hosts share one SSH port too, and it is the one each listens on.
func TestFleet_NVOSHostsShareOneSSHPort(t *testing.T) {
	f := start(t, sim.Options{Layout: sim.Layout{Compute: 1, Switches: 3}})
	port := f.SSHPort()
	if port == 0 {
		t.Fatal("no shared SSH port")
	}
	for _, n := range f.Nodes() {
		if h, ok := n.Switch.(*sim.NVOSHost); ok && h.SSHPort() != port {
			t.Errorf("%s: SSH on %d, fleet port %d", n.ID, h.SSHPort(), port)
		}
	}
}

// When the port the first NVOS host picked is taken on another host's
// address, Start begins again (and tears the first attempt down: goleak).
func TestFleet_SharedNVUEPortTakenElsewhereStartsAgain(t *testing.T) {
	var calls atomic.Int32
	hosts := func(ctx context.Context, spec sim.SwitchHostSpec) (sim.SwitchHost, error) {
		if calls.Add(1) == 2 {
			return nil, fmt.Errorf("listen %s:%d: %w", spec.IP, spec.NVUEPort, syscall.EADDRINUSE)
		}
		return sim.NVOSHosts(ctx, spec)
	}
	f := start(t, sim.Options{Layout: sim.Layout{Switches: 2}, SwitchHosts: hosts})
	if f.NVUEPort() == 0 || calls.Load() != 4 {
		t.Fatalf("NVUEPort %d after %d host starts, want a shared port after 4", f.NVUEPort(), calls.Load())
	}
}

func TestFleet_TimeScaleScalesAFlash(t *testing.T) {
	// At 0.0005, the default 10-minute compute flash takes 300 ms.
	f := start(t, sim.Options{Layout: sim.Layout{Compute: 1}, NoSwitchHosts: true, TimeScale: 0.0005,
		Timing: sim.DefaultTiming()})
	if got := f.Scale(10 * time.Minute); got != 300*time.Millisecond {
		t.Fatalf("Scale(10m) = %v", got)
	}
	c := client(t, f.Nodes()[0].BMC)
	ctx := testCtx(t)
	begin := time.Now()
	st, err := c.StartMultipartUpdate(ctx, redfish.MultipartUpdate{File: redfish.Firmware{
		FileName: "bmc-v9.fwpkg", Body: strings.NewReader("payload"), Size: 7}})
	if err != nil {
		t.Fatal(err)
	}
	first, err := c.Task(ctx, st.TaskID)
	if err != nil || first.State != redfish.TaskRunning || first.Percent >= 100 {
		t.Fatalf("fresh task = %+v, %v", first, err)
	}
	if _, err := c.WaitTask(ctx, st.TaskID, nil); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(begin); took < 300*time.Millisecond {
		t.Fatalf("flash finished after %v, before its scaled 300 ms", took)
	}
	if _, staged, _ := f.Nodes()[0].Device.Firmware("FW_BMC_0"); staged != "bmc-v9" {
		t.Fatalf("staged %q, want the file-name version bmc-v9", staged)
	}
}

func TestFleet_CloseIsIdempotentAndStopsListeners(t *testing.T) {
	f := start(t, sim.Options{Layout: sim.Layout{Compute: 1}, NoSwitchHosts: true})
	ep := f.Nodes()[0].BMC
	f.Close()
	f.Close()
	d := net.Dialer{Timeout: time.Second}
	conn, err := d.DialContext(context.Background(), "tcp", ep.Addr(443))
	if err == nil {
		conn.Close()
		t.Fatal("listener still accepting after Close")
	}
}
