package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// chromium finds the browser the console test drives: $RMSD_CHROMIUM, else
// chromium on the PATH. Without one the test skips, unless
// RMSD_TEST_REQUIRE_CHROMIUM=1 (CI, where .ci/install-chromium.sh installs
// it) makes that a failure.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("RMSD_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("RMSD_TEST_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("RMSD_TEST_REQUIRE_CHROMIUM=1 but no chromium on the PATH (.ci/install-chromium.sh installs it)")
	}
	t.Skip("no chromium on the PATH: install Debian's chromium (.ci/install-chromium.sh) to run the console in a browser")
	return ""
}

// browser starts a headless chromium; the sandbox is turned off only when
// running as root, where chromium refuses it.
func browser(t *testing.T, path string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path),
		chromedp.WindowSize(1280, 900), chromedp.Flag("disable-gpu", true))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// waitJS waits, up to a generous deadline, until expr is true in the page.
func waitJS(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	start := time.Now()
	defer func() { t.Logf("%s: %.1fs", what, time.Since(start).Seconds()) }()
	ctx, cancel := context.WithTimeout(ctx, 45*time.Second)
	defer cancel()
	var ok bool
	if err := chromedp.Run(ctx, chromedp.Poll(expr, &ok, chromedp.WithPollingInterval(100*time.Millisecond))); err != nil || !ok {
		var html string
		_ = chromedp.Run(context.WithoutCancel(ctx), chromedp.OuterHTML("main", &html))
		t.Fatalf("never: %s (%v)\npage: %s", what, err, html)
	}
}

// evalJS evaluates expr in the page.
func evalJS[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	var out T
	if err := chromedp.Run(ctx, chromedp.Evaluate(expr, &out)); err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return out
}

// screenshot writes the page to $RMSD_CONSOLE_SCREENSHOTS/<name>.png when
// that is set (docs/console.md: how the committed screenshots are made).
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("RMSD_CONSOLE_SCREENSHOTS")
	if dir == "" {
		return
	}
	var png []byte
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestConsoleInABrowser drives the console of a real `rmsd --simulate` in
// headless chromium: the site page shows the rack's 35 nodes powered on;
// a cold reboot started through gRPC colours every cell with its job and
// turns the shelves off, and the job page's stages advance, all without a
// reload; then the firmware catalog page shows the simulated release
// appear and become available as it is added, and the rack page shows a
// tray's BMC version change when a firmware update of it ends.
func TestConsoleInABrowser(t *testing.T) {
	path := chromium(t)
	dir := t.TempDir()
	nodesFile := filepath.Join(dir, "nodes.json")
	cfg := writeFile(t, fmt.Sprintf(`
port = 0
[server]
drain_delay_seconds = 0
[console]
power_refresh_seconds = 1
[simulator]
network = 141
bmc_port = 0
nvue_port = 0
nmx_port = 0
gnmi_port = 0
ssh_port = 0
nodes_file = %q
`, nodesFile))
	d, client := startSimulated(t, cfg)
	base := "http://" + d.metricsSrv.Addr().String() + "/console/"
	ctx := browser(t, path)

	// The site: every cell of the rack read powered on by the refresher,
	// the event stream open.
	if err := chromedp.Run(ctx, chromedp.Navigate(base)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the live stream is open", `document.querySelector("#live-status.ok") !== null`)
	waitJS(t, ctx, "35 cells read on", `document.querySelectorAll('.tile .cell[data-power="on"]').length === 35`)
	screenshot(t, ctx, "site")
	// A mark the page keeps only as long as it is not reloaded.
	evalJS[bool](t, ctx, `window.notReloaded = true`)

	data, err := os.ReadFile(nodesFile)
	if err != nil {
		t.Fatal(err)
	}
	var nodes rmspb.NodeSet
	if err := protojson.Unmarshal(data, &nodes); err != nil {
		t.Fatal(err)
	}
	rpc, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u := func(n uint32) *uint32 { return &n }
	rep, err := client.ExecuteColdReboot(rpc, &rmspb.ExecuteColdRebootRequest{Nodes: &nodes,
		PrestageShutdownFloorSeconds: u(1), PrestageShutdownPollMaxSeconds: u(30),
		DischargeFloorSeconds: u(4), DischargePollMaxSeconds: u(60),
		BmcUpFloorSeconds: u(1), BmcUpPollMaxSeconds: u(60),
		NvosHelloBackoffSeconds: u(1), ComputeBootWaitSeconds: u(2), PollIntervalSeconds: u(1)})
	if err != nil || rep.GetResponse().GetJobId() == "" {
		t.Fatalf("ExecuteColdReboot: %v %v", rep, err)
	}
	job := rep.GetResponse().GetJobId()

	// The site page follows without a reload: every cell held by the job,
	// then the shelves off.
	waitJS(t, ctx, "every cell held by the cold reboot",
		fmt.Sprintf(`document.querySelectorAll('.tile .cell[data-holder=%q]').length === 35`, job))
	waitJS(t, ctx, "the shelves read off", `document.querySelectorAll('.tile .cell.shelf[data-power="off"]').length === 8`)
	screenshot(t, ctx, "site-cold-reboot")
	if !evalJS[bool](t, ctx, `window.notReloaded === true`) {
		t.Fatal("the site page was reloaded")
	}

	// The job page, in a second tab: its stages advance live.
	jobTab, closeTab := chromedp.NewContext(ctx)
	defer closeTab()
	if err := chromedp.Run(jobTab, chromedp.Navigate(base+"jobs/"+job)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, jobTab, "the job page's stream is open", `document.querySelector("#live-status.ok") !== null`)
	evalJS[bool](t, jobTab, `window.notReloaded = true`)
	done := `document.querySelectorAll('.stage[data-status="completed"]').length`
	first := evalJS[int](t, jobTab, done)
	waitJS(t, jobTab, "a stage completes", fmt.Sprintf(`%s > %d`, done, first))
	screenshot(t, jobTab, "job-running")
	waitJS(t, jobTab, "the cold reboot completes",
		`document.querySelector('.facts[data-state="completed"]') !== null && document.querySelector('pre.result') !== null`)
	if n := evalJS[int](t, jobTab, done); n != 9 {
		t.Errorf("%d of 9 stages completed on the finished job's page", n)
	}
	if !evalJS[bool](t, jobTab, `window.notReloaded === true`) {
		t.Fatal("the job page was reloaded")
	}
	screenshot(t, jobTab, "job")

	// Back on the site: the holds are gone and every node is on again.
	waitJS(t, ctx, "the holds released and everything on",
		`document.querySelectorAll('.tile .cell.held').length === 0 && document.querySelectorAll('.tile .cell[data-power="on"]').length === 35`)

	// The rack's front view and the jobs list render.
	if err := chromedp.Run(ctx, chromedp.Navigate(base+"racks/rack-001")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the front view in slot order",
		`Array.from(document.querySelectorAll('tr.unit td.pos')).map(e => e.textContent.replace('*','')).join(',').startsWith('PS 1,PS 2,PS 3,PS 4,slot 1,slot 2')`)
	screenshot(t, ctx, "rack")
	if err := chromedp.Run(ctx, chromedp.Navigate(base+"jobs")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the jobs list shows the cold reboot", fmt.Sprintf(`document.querySelector('tr[data-job=%q][data-state="completed"]') !== null`, job))
	screenshot(t, ctx, "jobs")

	// The firmware catalog, open while the simulated release is added
	// through gRPC: the release appears, then reads available once its
	// artifacts are downloaded, without a reload.
	if err := chromedp.Run(ctx, chromedp.Navigate(base+"firmware")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the firmware page's stream is open", `document.querySelector("#live-status.ok") !== null`)
	evalJS[bool](t, ctx, `window.notReloaded = true`)
	release, err := os.ReadFile(filepath.Join(dir, "simulated-release.json"))
	if err != nil {
		t.Fatal(err)
	}
	var add rmspb.AddFirmwareObjectRequest
	if err := protojson.Unmarshal(release, &add); err != nil {
		t.Fatal(err)
	}
	addCtx, cancelAdd := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelAdd()
	added, err := client.AddFirmwareObject(addCtx, &add)
	if err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the release appears and becomes available",
		fmt.Sprintf(`document.querySelectorAll('section.object').length === 1 && document.querySelector('section[id=%q] .state.completed') !== null`,
			"object-"+added.GetObject().GetId()))
	if !evalJS[bool](t, ctx, `window.notReloaded === true`) {
		t.Fatal("the firmware page was reloaded")
	}
	if html := evalJS[string](t, ctx, `document.body.innerHTML`); strings.Contains(html, "password") {
		t.Error("the firmware page mentions a password")
	}
	screenshot(t, ctx, "firmware")

	// The rack page, open while the release is applied to one compute
	// tray: the tray's BMC version changes from the simulator's to the
	// release's when the job ends, without a reload.
	var tray *rmspb.NodeInfo
	for _, n := range nodes.GetNodes() {
		if n.GetType() == rmspb.NodeType_COMPUTE_GB200_NVIDIA {
			tray = n
			break
		}
	}
	if err := chromedp.Run(ctx, chromedp.Navigate(base+"racks/"+tray.GetRackId())); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the rack page's stream is open", `document.querySelector("#live-status.ok") !== null`)
	versions := fmt.Sprintf(`document.querySelector('tr[data-node=%q] td.firmware').textContent`, tray.GetNodeId())
	waitJS(t, ctx, "the tray's firmware read, the simulator's BMC", versions+`.includes("GB200Nvl-25.06-3")`)
	evalJS[bool](t, ctx, `window.notReloaded = true`)
	applyCtx, cancelApply := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelApply()
	applied, err := client.ApplyStoredFirmwareObject(applyCtx, &rmspb.ApplyStoredFirmwareObjectRequest{
		HardwareType: add.GetHardwareType(), Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{tray}},
		ComponentFilters: map[int32]*rmspb.FirmwareObjectComponentFilter{ // the BMC only: the shortest update
			int32(rmspb.NodeType_COMPUTE_GB200_NVIDIA): {Components: []string{"BMC"}}}})
	if err != nil || applied.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("ApplyStoredFirmwareObject: %v %v", applied, err)
	}
	waitJS(t, ctx, "the tray shows the release's BMC", versions+`.includes("GB200Nvl-25.04-1") && !`+versions+`.includes("GB200Nvl-25.06-3")`)
	if !evalJS[bool](t, ctx, `window.notReloaded === true`) {
		t.Fatal("the rack page was reloaded")
	}
}
