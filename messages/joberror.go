package messages

// JobError classifies why a job failed. The numeric values of the codes that
// exist on the wire match rack_manager.JobError; ErrorFailedPrecondition is
// engine-internal and travels as ErrorClientError (see Wire).
type JobError int32

// Job error codes.
const (
	ErrorUnspecified      JobError = 0
	ErrorInternal         JobError = 1
	ErrorOther            JobError = 2
	ErrorInvalidArgument  JobError = 3
	ErrorClientError      JobError = 11
	ErrorServerError      JobError = 12
	ErrorTimeout          JobError = 13
	ErrorInvalidResponse  JobError = 14
	ErrorUnauthenticated  JobError = 15
	ErrorTargetNotFound   JobError = 21
	ErrorFileNotFound     JobError = 22
	ErrorUpdateInProgress JobError = 23
	// ErrorFailedPrecondition has no wire value of its own; Wire maps it to
	// ErrorClientError.
	ErrorFailedPrecondition JobError = 1001
)

type jobErrorNames struct{ name, text, label string }

func (e JobError) names() jobErrorNames {
	switch e {
	case ErrorInternal:
		return jobErrorNames{"Internal", "internal", "internal"}
	case ErrorOther:
		return jobErrorNames{"Other", "other", "other"}
	case ErrorInvalidArgument:
		return jobErrorNames{"InvalidArgument", "invalid argument", "invalid_argument"}
	case ErrorFailedPrecondition:
		return jobErrorNames{"FailedPrecondition", "failed precondition", "failed_precondition"}
	case ErrorClientError:
		return jobErrorNames{"ClientError", "client error", "client_error"}
	case ErrorServerError:
		return jobErrorNames{"ServerError", "server error", "server_error"}
	case ErrorTimeout:
		return jobErrorNames{"Timeout", "timeout", "timeout"}
	case ErrorInvalidResponse:
		return jobErrorNames{"InvalidResponse", "invalid response", "invalid_response"}
	case ErrorUnauthenticated:
		return jobErrorNames{"Unauthenticated", "unauthenticated", "unauthenticated"}
	case ErrorTargetNotFound:
		return jobErrorNames{"TargetNotFound", "target not found", "target_not_found"}
	case ErrorFileNotFound:
		return jobErrorNames{"FileNotFound", "file not found", "file_not_found"}
	case ErrorUpdateInProgress:
		return jobErrorNames{"UpdateInProgress", "update in progress", "update_in_progress"}
	default:
		return jobErrorNames{"Unspecified", "unspecified", "unspecified"}
	}
}

// String returns the code name used inside result_json documents, e.g.
// "Internal" or "UpdateInProgress".
func (e JobError) String() string { return e.names().name }

// Text returns the human-readable form, e.g. "update in progress".
func (e JobError) Text() string { return e.names().text }

// MetricsLabel returns the lowercase snake_case label, e.g. "target_not_found".
func (e JobError) MetricsLabel() string { return e.names().label }

// Wire returns the rack_manager.JobError number sent on the wire. Unknown
// codes map to Unspecified and FailedPrecondition maps to ClientError.
func (e JobError) Wire() int32 {
	switch e {
	case ErrorFailedPrecondition:
		return int32(ErrorClientError)
	case ErrorInternal, ErrorOther, ErrorInvalidArgument, ErrorClientError,
		ErrorServerError, ErrorTimeout, ErrorInvalidResponse, ErrorUnauthenticated,
		ErrorTargetNotFound, ErrorFileNotFound, ErrorUpdateInProgress:
		return int32(e)
	default:
		return int32(ErrorUnspecified)
	}
}
