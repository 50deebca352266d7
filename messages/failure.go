package messages

import "encoding/json"

// Failure is the payload a worker records when its job fails.
type Failure struct {
	Code        JobError
	Description string // "Failed" when empty
	Message     string
	ResultJSON  string
}

// NewFailure builds a failure with the default description and the default
// failure document {"status":"failed","error_code":...,"error_message":...}.
func NewFailure(code JobError, message string) Failure {
	return Failure{Code: code, Description: "Failed", Message: message, ResultJSON: FailureJSON(code, message)}
}

// FailureJSON renders the default failure document with keys in the order
// status, error_code, error_message.
func FailureJSON(code JobError, message string) string {
	doc := struct {
		Status       string `json:"status"`
		ErrorCode    string `json:"error_code"`
		ErrorMessage string `json:"error_message"`
	}{"failed", code.String(), message}
	b, err := json.Marshal(doc)
	if err != nil { // unreachable: the document holds only strings
		return `{"status":"failed"}`
	}
	return string(b)
}
