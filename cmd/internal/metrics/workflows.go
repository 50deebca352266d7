package metrics

import (
	"strconv"

	"github.com/rmsd/rmsd/messages"
)

// ObserveJob feeds the workflow families from the job engine's OnJob hook:
// an admitted job counts as queued and joins the in-flight gauge, a sealed
// one counts as completed (error_code "none") or failed, leaves it and
// observes its duration. It runs on the registry's turn and only touches
// counters.
func (m *Metrics) ObserveJob(o messages.JobObservation) {
	workflow, leaf := o.Type.String(), strconv.FormatBool(o.Leaf)
	switch o.State {
	case messages.StateCompleted:
		m.workflows.WithLabelValues(workflow, leaf, "completed", "none").Inc()
		m.inFlight.WithLabelValues(workflow, leaf).Dec()
		m.jobs.WithLabelValues(workflow, leaf, "completed").Observe(o.Duration.Seconds())
	case messages.StateFailed:
		m.workflows.WithLabelValues(workflow, leaf, "failed", o.Code.MetricsLabel()).Inc()
		m.inFlight.WithLabelValues(workflow, leaf).Dec()
		m.jobs.WithLabelValues(workflow, leaf, "failed").Observe(o.Duration.Seconds())
	default:
		m.workflows.WithLabelValues(workflow, leaf, "queued", "none").Inc()
		m.inFlight.WithLabelValues(workflow, leaf).Inc()
	}
}
