package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc/codes"
)

// Info is what the rms_api_version and rms_api_config families report.
type Info struct {
	BuildVersion, BuildDate, GitSHA, GoVersion string
	// TLSMode is "mTLS" or "insecure".
	TLSMode string
	// PersistenceType is the store engine, "sqlite" or "postgres".
	PersistenceType string
	GRPCPort        int
	FirmwareDir     string
}

// rpcBuckets, in seconds, reach from a sub-millisecond read (GetVersion, a
// status poll) to a multi-minute synchronous call (a power change waiting
// for a whole rack's BMCs). Upstream's seven (0.01 .. 10 s) put every read
// in the first bucket and every long call in +Inf.
var rpcBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
	1, 2.5, 5, 10, 30, 60, 120, 300, 600}

// jobBuckets, in seconds, reach from a simulated job's fraction of a second
// to a firmware update of several hours.
var jobBuckets = []float64{0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400}

// Metrics owns the registry and the families rmsd updates.
type Metrics struct {
	reg       *prometheus.Registry
	rpc       *prometheus.HistogramVec
	workflows *prometheus.CounterVec
	inFlight  *prometheus.GaugeVec
	jobs      *prometheus.HistogramVec
	commits   *prometheus.HistogramVec
	hardware  hardwareFamilies
	// certificates and drain are set when rmsd loads its certificates and
	// when its shutdown drain begins.
	certificates *prometheus.GaugeVec
	drain        prometheus.Gauge
}

// New registers the info families and the families the engine and the
// gRPC server feed.
func New(info Info) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		rpc: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rms_grpc_server_handling_seconds",
			Help:    "Time to handle a gRPC request, by service, method and gRPC code.",
			Buckets: rpcBuckets,
		}, []string{"service", "method", "code"}),
		workflows: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rms_workflows_counts_total",
			Help: "Workflows by type and state: queued when created, completed or failed when they end (error_code none on success).",
		}, []string{"workflow_type", "is_leaf", "workflow_state", "error_code"}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "rms_workflows_in_flight",
			Help: "Workflows created and not yet completed or failed.",
		}, []string{"workflow_type", "is_leaf"}),
		jobs: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rmsd_job_duration_seconds",
			Help:    "Time from a job's creation to its end, by workflow type and outcome (completed or failed).",
			Buckets: jobBuckets,
		}, []string{"workflow_type", "is_leaf", "outcome"}),
		commits:      newCommitHistogram(info.PersistenceType),
		hardware:     newHardwareFamilies(),
		certificates: newCertificateGauge(),
		drain:        newDrainGauge(),
	}
	version := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "rms_api_version",
		Help: "Build information of the running rmsd (always 1).",
		ConstLabels: prometheus.Labels{"build_version": info.BuildVersion, "build_date": info.BuildDate,
			"git_sha": info.GitSHA, "go_version": info.GoVersion},
	})
	version.Set(1)
	config := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "rms_api_config",
		Help: "Configuration of the running rmsd (always 1).",
		ConstLabels: prometheus.Labels{"tls_mode": info.TLSMode, "persistence_type": info.PersistenceType,
			"grpc_port": strconv.Itoa(info.GRPCPort), "firmware_dir": info.FirmwareDir},
	})
	config.Set(1)
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "rmsd_build_info",
		Help: "The running rmsd's version, commit and Go version (always 1).",
		ConstLabels: prometheus.Labels{"version": info.BuildVersion, "commit": info.GitSHA,
			"goversion": info.GoVersion},
	})
	build.Set(1)
	m.reg.MustRegister(version, config, build, m.rpc, m.workflows, m.inFlight, m.jobs,
		m.commits, m.hardware.latency, m.hardware.errors, m.certificates, m.drain,
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())
	return m
}

// ObserveRPC records one finished RPC; it is an rmsserver.RPCObserver.
func (m *Metrics) ObserveRPC(service, method string, code codes.Code, elapsed time.Duration) {
	m.rpc.WithLabelValues(service, method, code.String()).Observe(elapsed.Seconds())
}

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}
