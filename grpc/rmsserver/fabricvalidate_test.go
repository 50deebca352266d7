package rmsserver

import (
	"maps"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// The v2 reconcile refuses what v1 refuses as a topology (1 MB, shell
// syntax, a path, 129 characters) with INVALID_ARGUMENT naming the field
// and never echoing it, before any job: no switch's config changes. Both
// versions call the one check (topologyProblem).
func TestFabricReconcileRefusesWhatV1Refuses(t *testing.T) {
	r := startReconcileRack(t)
	before := r.states()
	for name, topo := range map[string]string{
		"1 MB":           strings.Repeat("t", 1<<20),
		"shell":          "$(reboot);`id`",
		"path":           "../../x",
		"129 characters": strings.Repeat("t", 129),
		"escape":         "\x1b[31mred",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := r.v2.ConfigureScaleUpFabricManager(rpcContext(t), r.fabricRequest(topo))
			st, _ := status.FromError(err)
			if st.Code() != codes.InvalidArgument || !strings.HasPrefix(st.Message(), "config.topology_type ") || strings.Contains(st.Message(), topo) {
				t.Errorf("v2: %v %q, want INVALID_ARGUMENT naming config.topology_type", st.Code(), clip(st.Message(), 100))
			}
			if p := topologyProblem("topology_type", topo); p == "" {
				t.Errorf("v1's check accepts it")
			}
		})
	}
	if after := r.states(); !maps.Equal(after, before) {
		t.Errorf("a refused request changed the switches:\n%v\n→ %v", before, after)
	}
}

// Extra static config entries are names and short text too.
func TestFabricReconcileRefusesBadStaticConfigs(t *testing.T) {
	r := startReconcileRack(t)
	for name, tc := range map[string]struct {
		e    *rmspb.ScaleUpFabricStaticConfig
		want string
	}{
		"path file":     {&rmspb.ScaleUpFabricStaticConfig{ConfigFileName: "../../etc/passwd", Key: "K", Value: "v"}, "config.extra_static_configs[0].config_file_name may only hold"},
		"dot file":      {&rmspb.ScaleUpFabricStaticConfig{ConfigFileName: "..", Key: "K", Value: "v"}, "may not start with '.'"},
		"shell key":     {&rmspb.ScaleUpFabricStaticConfig{ConfigFileName: "fm_config", Key: "$(id)", Value: "v"}, "config.extra_static_configs[0].key may only hold"},
		"long value":    {&rmspb.ScaleUpFabricStaticConfig{ConfigFileName: "fm_config", Key: "K", Value: strings.Repeat("v", 1<<20)}, "value is 1048576 bytes long; at most 1024"},
		"newline value": {&rmspb.ScaleUpFabricStaticConfig{ConfigFileName: "fm_config", Key: "K", Value: "1\nOTHER=2"}, "value contains the control"},
	} {
		t.Run(name, func(t *testing.T) {
			req := r.fabricRequest(testTopology)
			req.Config.ExtraStaticConfigs = []*rmspb.ScaleUpFabricStaticConfig{tc.e}
			_, err := r.v2.ConfigureScaleUpFabricManager(rpcContext(t), req)
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want INVALID_ARGUMENT containing %q", clip(status.Convert(err).Message(), 200), tc.want)
			}
		})
	}
}
