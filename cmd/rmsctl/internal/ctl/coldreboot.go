package ctl

import (
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// coldRebootWait is one of the runbook's waits that the request may
// override: its flag, what it bounds, and where it goes in the request.
type coldRebootWait struct {
	flag, usage string
	value       time.Duration
	set         func(req *rmspb.ExecuteColdRebootRequest, seconds uint32)
}

// coldRebootWaits are the waits of ExecuteColdReboot, as flags.
func coldRebootWaits() []*coldRebootWait {
	return []*coldRebootWait{
		{flag: "prestage-shutdown-floor", usage: "least time given to the graceful compute shutdown",
			set: func(r *rmspb.ExecuteColdRebootRequest, s uint32) { r.PrestageShutdownFloorSeconds = &s }},
		{flag: "prestage-shutdown-poll-max", usage: "longest wait for the compute trays to power off",
			set: func(r *rmspb.ExecuteColdRebootRequest, s uint32) { r.PrestageShutdownPollMaxSeconds = &s }},
		{flag: "discharge-floor", usage: "least time the trays are left without power",
			set: func(r *rmspb.ExecuteColdRebootRequest, s uint32) { r.DischargeFloorSeconds = &s }},
		{flag: "discharge-poll-max", usage: "longest wait for every tray to lose power",
			set: func(r *rmspb.ExecuteColdRebootRequest, s uint32) { r.DischargePollMaxSeconds = &s }},
		{flag: "bmc-up-floor", usage: "least wait after the shelves come back before the BMCs are asked",
			set: func(r *rmspb.ExecuteColdRebootRequest, s uint32) { r.BmcUpFloorSeconds = &s }},
		{flag: "bmc-up-poll-max", usage: "longest wait for the BMCs to answer",
			set: func(r *rmspb.ExecuteColdRebootRequest, s uint32) { r.BmcUpPollMaxSeconds = &s }},
		{flag: "nvos-hello-backoff", usage: "pause between NVOS readiness checks of a switch",
			set: func(r *rmspb.ExecuteColdRebootRequest, s uint32) { r.NvosHelloBackoffSeconds = &s }},
		{flag: "compute-boot-wait", usage: "wait for the compute trays' operating system after power-on",
			set: func(r *rmspb.ExecuteColdRebootRequest, s uint32) { r.ComputeBootWaitSeconds = &s }},
		{flag: "poll-every", usage: "how often the runbook polls the devices",
			set: func(r *rmspb.ExecuteColdRebootRequest, s uint32) { r.PollIntervalSeconds = &s }},
	}
}

func (a *app) coldRebootCommand() *cobra.Command {
	var rack, domain string
	var w watchFlags
	waits := coldRebootWaits()
	cmd := &cobra.Command{
		Use:   "cold-reboot --rack RACK [NODE_ID...] [--watch]",
		Short: "Cold-reboot a rack: the GB200 runbook from compute shutdown to compute boot (ExecuteColdReboot)",
		Long: `Run the rack cold-reboot runbook on the nodes of RACK in the nodes file (all of
them, or those named; at least one power shelf, compute tray and switch): shut
the compute trays down, power the shelves off, wait for every tray to lose
power, power the shelves on, wait for the BMCs and NVOS, power the compute trays
on and wait for them to boot. One job holds every node until it ends; with
--watch, follow it as "rmsctl jobs watch" does, its stage ("stage 4/9: ...") as
the bar, and exit with its result.

The wait flags override the runbook's waits in whole seconds (unset: rmsd's
defaults, e.g. at least 180 s for the trays to discharge). Against hardware,
leave them unset. Exit 0 when the job was started (with --watch: completed),
1 when it was not started (a node busy or unusable: nothing starts) or failed,
2 for a bad flag or nodes file, 5 when rmsd rejected the request.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			nodes, err := a.suppliedNodes(rack, args)
			if err != nil {
				return err
			}
			req := &rmspb.ExecuteColdRebootRequest{Nodes: nodes}
			if domain != "" {
				req.Domain = &domain
			}
			for _, wt := range waits {
				if !cmd.Flags().Changed(wt.flag) {
					continue
				}
				secs, err := wholeSeconds("--"+wt.flag, wt.value)
				if err != nil {
					return err
				}
				wt.set(req, secs)
			}
			resp, err := call(cmd.Context(), a, "ExecuteColdReboot", req, rmspb.RackManagerClient.ExecuteColdReboot)
			if err != nil {
				return err
			}
			if err := a.emit(resp, func(w io.Writer) { batchSummary(w, resp.GetResponse()) }); err != nil {
				return err
			}
			return a.afterStart(cmd, w, "ExecuteColdReboot", resp.GetResponse())
		},
	}
	rackFlag(cmd, &rack)
	cmd.Flags().StringVar(&domain, "domain", "", "management domain of the nodes (optional)")
	for _, wt := range waits {
		cmd.Flags().DurationVar(&wt.value, wt.flag, 0, wt.usage+" (whole seconds; default: rmsd's)")
	}
	a.nodesFlag(cmd)
	w.flags(cmd)
	return cmd
}

// wholeSeconds is d as the whole, positive seconds a request carries.
func wholeSeconds(flag string, d time.Duration) (uint32, error) {
	if d < time.Second || d%time.Second != 0 || d/time.Second > 1<<31 {
		return 0, usageError("%s %s: want whole seconds, at least 1s", flag, d)
	}
	return uint32(d / time.Second), nil
}
