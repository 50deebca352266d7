package messages

import "errors"

// ErrCancelledByOperator is the cause an operator's cancel (the admin
// service's CancelJob, `rmsctl jobs cancel`) gives the workflows it stops;
// a workflow that reports its context's cause carries it into the job's
// record.
var ErrCancelledByOperator = errors.New("cancelled by operator")
