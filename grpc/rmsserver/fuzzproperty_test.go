package rmsserver

import (
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
)

// answerProblem checks the property every answer of method must have; ""
// when it holds.
func answerProblem(method string, reply proto.Message, err error) string {
	if err != nil {
		st, ok := status.FromError(err)
		readded := st.Code() == codes.AlreadyExists && method == rmspb.RackManager_AddFirmwareObject_FullMethodName
		unavailable := st.Code() == codes.FailedPrecondition && (method == rmspb.RackManager_ApplyStoredFirmwareObject_FullMethodName ||
			method == rmspb.RackManager_ApplyStoredSwitchSystemImage_FullMethodName ||
			method == rmspb.RackManager_ConfigureSwitchCertificate_FullMethodName ||
			method == rmspbv2.RackManagerV2_ConfigureScaleUpFabricManager_FullMethodName)
		switch {
		case !ok:
			return fmt.Sprintf("not a gRPC status: %v", err)
		case st.Code() != codes.InvalidArgument && st.Code() != codes.NotFound && !readded && !unavailable:
			return fmt.Sprintf("answered %v: %s", st.Code(), clip(st.Message(), 2000))
		case len(st.Message()) > maxAnswerMessage:
			return fmt.Sprintf("a %d-byte status message", len(st.Message()))
		}
		return ""
	}
	if reply == nil {
		return "neither a reply nor an error"
	}
	return replyProblem(reply)
}

// maxAnswerMessage is the most any message of an answer may take ("a few
// KiB").
const maxAnswerMessage = 4096

// replyProblem checks that a reply's status is set and agrees with its
// stats and results, and that its messages are bounded.
func replyProblem(reply proto.Message) string {
	switch r := reply.(type) {
	case *rmspb.CreateNodesResponse:
		return firstProblem(statusProblem(r.GetResponse().GetStatus(), r.GetResponse().GetMessage()),
			statsProblem(r.GetStats(), r.GetResponse().GetStatus()))
	case *rmspb.UpdateNodeResponse:
		return statusProblem(r.GetResponse().GetStatus(), r.GetResponse().GetMessage())
	case *rmspb.DeleteNodeResponse:
		return statusProblem(r.GetResponse().GetStatus(), r.GetResponse().GetMessage())
	case *rmspb.ListRacksResponse, *rmspb.ListNodeInventoryResponse, *rmspb.GetVersionResponse:
		return ""
	case *rmspb.SetPowerStateResponse:
		return statusProblem(r.GetStatus(), "")
	case *rmspb.GetPowerStateResponse:
		ok := r.GetStatus() == rmspb.ReturnCode_RETURN_CODE_SUCCESS
		if ok != (r.GetPstate() != "") {
			return fmt.Sprintf("status %v with pstate %q", r.GetStatus(), r.GetPstate())
		}
		return statusProblem(r.GetStatus(), "")
	case *rmspb.BatchSetPowerStateResponse:
		return batchProblem(r.GetResponse())
	case *rmspb.BatchGetPowerStateResponse:
		if got, want := len(r.GetNodePowerStates()), int(r.GetResponse().GetStats().GetSuccessfulNodes()); got != want {
			return fmt.Sprintf("%d power states for %d successful nodes", got, want)
		}
		return batchProblem(r.GetResponse())
	case *rmspb.ExecuteColdRebootResponse:
		return batchProblem(r.GetResponse())
	case *rmspb.UpdateSwitchSystemPasswordResponse, *rmspb.BatchResetSwitchFactoryDefaultResponse, *rmspb.BatchResetSwitchSdnFactoryDefaultResponse:
		return batchProblem(r.(nodeBatchReply).GetResponse())
	case *rmspb.GetNodeDeviceInfoResponse:
		return statusProblem(r.GetStatus(), r.GetMessage())
	case *rmspb.ListNodeDeviceInfoByNodeTypeResponse:
		return firstProblem(statusProblem(r.GetStatus(), r.GetMessage()), statsProblem(r.GetStats(), r.GetStatus()),
			detailsProblem(len(r.GetNodeDeviceDetails()), r.GetStats()))
	case *rmspb.BatchGetNodeDeviceInfoResponse:
		return firstProblem(statusProblem(r.GetStatus(), r.GetMessage()), statsProblem(r.GetStats(), r.GetStatus()),
			detailsProblem(len(r.GetNodeDeviceDetails()), r.GetStats()))
	case *rmspb.GetNodeFirmwareInventoryResponse:
		if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS && len(r.GetFirmwareList()) != 0 {
			return fmt.Sprintf("status %v with %d firmware entries", r.GetStatus(), len(r.GetFirmwareList()))
		}
		return statusProblem(r.GetStatus(), "")
	case *rmspb.BatchGetFirmwareInventoryResponse:
		return firstProblem(batchProblem(r.GetResponse()), inventoriesProblem(r.GetNodes(), r.GetResponse()))
	case *rmspb.GetRackFirmwareInventoryResponse:
		return statusProblem(r.GetStatus(), "")
	case *rmspb.CompareFirmwareObjectResponse:
		return firstProblem(batchProblem(r.GetResponse()), comparisonsProblem(r))
	case *rmspb.UpdateFirmwareResponse:
		ok := r.GetStatus() == rmspb.ReturnCode_RETURN_CODE_SUCCESS
		switch {
		case ok != (r.GetJobId() != ""):
			return fmt.Sprintf("status %v with job_id %q", r.GetStatus(), clip(r.GetJobId(), 100))
		case ok != (r.GetErrorCode() == rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_SUCCESS):
			return fmt.Sprintf("status %v with error_code %v", r.GetStatus(), r.GetErrorCode())
		}
		return statusProblem(r.GetStatus(), r.GetMessage())
	case *rmspb.BatchUpdateFirmwareByNodeTypeResponse:
		return firstProblem(batchProblem(r.GetResponse()), firmwareJobsProblem(r.GetResponse(), r.GetJobs()))
	case *rmspb.BatchUpdateFirmwareResponse:
		return firstProblem(batchProblem(r.GetResponse()), firmwareJobsProblem(r.GetResponse(), r.GetJobs()))
	case *rmspb.ApplyStoredFirmwareObjectResponse:
		return firstProblem(batchProblem(r.GetResponse()), firmwareJobsProblem(r.GetResponse(), r.GetJobs()),
			echoedProblem("object_id", r.GetObjectId()))
	case *rmspb.ApplyFirmwareObjectResponse:
		return firstProblem(batchProblem(r.GetResponse()), firmwareJobsProblem(r.GetResponse(), r.GetJobs()),
			echoedProblem("object_id", r.GetObjectId()))
	case *rmspb.GetJobStatusResponse:
		if len(r.GetJobStates()) == 0 {
			return "no job states"
		}
		return ""
	case *rmspb.GetFirmwareJobStatusResponse:
		return statusProblem(r.GetStatus(), r.GetErrorMessage())
	case *rmspb.GetSwitchSystemImageJobStatusResponse:
		return statusProblem(r.GetStatus(), r.GetMessage())
	case *rmspb.GetConfigureSwitchCertificateJobStatusResponse:
		return statusProblem(r.GetStatus(), r.GetMessage())
	case *rmspb.AddFirmwareObjectResponse:
		return objectProblem(r.GetObject())
	case *rmspb.GetFirmwareObjectResponse:
		return objectProblem(r.GetObject())
	case *rmspb.SetDefaultFirmwareObjectResponse:
		if !r.GetObject().GetIsDefault() {
			return "the object set as default is not the default"
		}
		return objectProblem(r.GetObject())
	case *rmspb.ListFirmwareObjectsResponse:
		for i, o := range r.GetObjects() {
			if p := objectProblem(o); p != "" {
				return fmt.Sprintf("object %d: %s", i, p)
			}
		}
		return ""
	case *rmspb.DeleteFirmwareObjectResponse:
		if r.GetResponse() == nil {
			return "no OperationResponse"
		}
		return statusProblem(r.GetResponse().GetStatus(), r.GetResponse().GetMessage())
	case *rmspb.GetFirmwareObjectHistoryResponse:
		for i, rec := range r.GetRecords() {
			if rec.GetObjectId() == "" || rec.GetRackId() == "" || rec.GetAppliedAt() == nil {
				return fmt.Sprintf("history record %d is incomplete: %v", i, rec)
			}
		}
		return ""
	}
	if p, ok := switchImageReplyProblem(reply); ok {
		return p
	}
	for _, check := range moreReplyProblems {
		if problem, ok := check(reply); ok {
			return problem
		}
	}
	return fmt.Sprintf("no property for %T", reply)
}

// moreReplyProblems are replyProblem cases kept in the file of their fuzz
// family: each says whether it knows the reply, and its problem.
var moreReplyProblems []func(reply proto.Message) (problem string, known bool)

// objectProblem checks a firmware object of a reply: present, with an id
// and its times, and with metadata.
func objectProblem(o *rmspb.FirmwareObject) string {
	switch {
	case o == nil:
		return "no firmware object"
	case o.GetId() == "" || len(o.GetId()) > 4*maxIDLength:
		return fmt.Sprintf("firmware object id %q", clip(o.GetId(), 100))
	case o.GetCreated() == nil || o.GetUpdated() == nil:
		return "firmware object without its times"
	case o.GetMetadata() == nil:
		return "firmware object without metadata"
	}
	return ""
}

func firstProblem(problems ...string) string {
	for _, p := range problems {
		if p != "" {
			return p
		}
	}
	return ""
}

func statusProblem(st rmspb.ReturnCode, message string) string {
	switch {
	case st != rmspb.ReturnCode_RETURN_CODE_SUCCESS && st != rmspb.ReturnCode_RETURN_CODE_FAILURE:
		return fmt.Sprintf("status %v", st)
	case len(message) > maxAnswerMessage:
		return fmt.Sprintf("a %d-byte message", len(message))
	}
	return ""
}

// statsProblem checks that stats are present and add up, and that a reply
// with a failed node is not SUCCESS.
func statsProblem(st *rmspb.NodeOperationStats, status rmspb.ReturnCode) string {
	switch {
	case st == nil:
		return "no stats"
	case st.GetSuccessfulNodes()+st.GetFailedNodes() != st.GetTotalNodes():
		return fmt.Sprintf("stats do not add up: %v", st)
	case st.GetFailedNodes() > 0 && status == rmspb.ReturnCode_RETURN_CODE_SUCCESS:
		return fmt.Sprintf("SUCCESS with %d failed nodes", st.GetFailedNodes())
	}
	return ""
}

func detailsProblem(details int, st *rmspb.NodeOperationStats) string {
	if details > int(st.GetSuccessfulNodes()) {
		return fmt.Sprintf("%d device details for %d successful nodes", details, st.GetSuccessfulNodes())
	}
	return ""
}

// batchProblem checks a NodeBatchResponse: present, status set, stats
// adding up, one result per node (or none, for a batch refused or started
// as a whole), each failure with a bounded reason and no reason on a
// success.
func batchProblem(r *rmspb.NodeBatchResponse) string {
	if r == nil {
		return "no NodeBatchResponse"
	}
	if p := firstProblem(statusProblem(r.GetStatus(), r.GetMessage()), statsProblem(r.GetStats(), r.GetStatus())); p != "" {
		return p
	}
	results := r.GetNodeResults()
	if len(results) != 0 && len(results) != int(r.GetStats().GetTotalNodes()) {
		return fmt.Sprintf("%d node results for %d nodes", len(results), r.GetStats().GetTotalNodes())
	}
	for i, nr := range results {
		failed := nr.GetStatus() == rmspb.ReturnCode_RETURN_CODE_FAILURE
		switch {
		case !failed && nr.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS:
			return fmt.Sprintf("node result %d has status %v", i, nr.GetStatus())
		case failed != (nr.GetErrorMessage() != ""):
			return fmt.Sprintf("node result %d: status %v, error_message %q", i, nr.GetStatus(), clip(nr.GetErrorMessage(), 200))
		case len(nr.GetErrorMessage()) > maxNodeError:
			return fmt.Sprintf("node result %d has a %d-byte error", i, len(nr.GetErrorMessage()))
		}
	}
	return ""
}

// inventoriesProblem checks that a firmware inventory batch lists exactly
// its successful nodes, in request order.
func inventoriesProblem(inv []*rmspb.NodeFirmwareInventory, r *rmspb.NodeBatchResponse) string {
	var ok []string
	for _, nr := range r.GetNodeResults() {
		if nr.GetStatus() == rmspb.ReturnCode_RETURN_CODE_SUCCESS {
			ok = append(ok, nr.GetNodeId())
		}
	}
	if len(inv) != len(ok) {
		return fmt.Sprintf("%d inventories for %d successful nodes", len(inv), len(ok))
	}
	for i, n := range inv {
		if n.GetNodeId() != ok[i] {
			return fmt.Sprintf("inventory %d is of node %q, the %dth successful node is %q", i, clip(n.GetNodeId(), 100), i, clip(ok[i], 100))
		}
	}
	return ""
}

// comparisonsProblem checks a CompareFirmwareObject reply: one comparison
// per node result, of the same node; a node matches only when it succeeded
// and every one of its (bounded) components matched; the reply matches
// only when every node does.
func comparisonsProblem(r *rmspb.CompareFirmwareObjectResponse) string {
	results := r.GetResponse().GetNodeResults()
	if len(r.GetNodes()) != len(results) {
		return fmt.Sprintf("%d comparisons for %d node results", len(r.GetNodes()), len(results))
	}
	all := len(results) > 0
	for i, n := range r.GetNodes() {
		ok := results[i].GetStatus() == rmspb.ReturnCode_RETURN_CODE_SUCCESS
		if n.GetNodeId() != results[i].GetNodeId() {
			return fmt.Sprintf("comparison %d is of node %q, its result of %q", i, clip(n.GetNodeId(), 100), clip(results[i].GetNodeId(), 100))
		}
		matched := len(n.GetComponents()) > 0
		for j, c := range n.GetComponents() {
			matched = matched && c.GetStatus() == rmspb.FirmwareComparisonStatus_FIRMWARE_COMPARISON_STATUS_MATCHED
			switch {
			case c.GetStatus() < rmspb.FirmwareComparisonStatus_FIRMWARE_COMPARISON_STATUS_MATCHED ||
				c.GetStatus() > rmspb.FirmwareComparisonStatus_FIRMWARE_COMPARISON_STATUS_UNVERIFIED:
				return fmt.Sprintf("node %d component %d has status %v", i, j, c.GetStatus())
			case !ok && c.GetStatus() != rmspb.FirmwareComparisonStatus_FIRMWARE_COMPARISON_STATUS_UNVERIFIED:
				return fmt.Sprintf("failed node %d has a %v component", i, c.GetStatus())
			case len(c.GetReason()) > maxNodeError || len(c.GetComponent()) > maxEchoed || len(c.GetTarget()) > maxEchoed ||
				len(c.GetInstalledVersion()) > maxEchoed || len(c.GetProposedVersion()) > maxEchoed:
				return fmt.Sprintf("node %d component %d is unbounded", i, j)
			}
		}
		if n.GetMatchesManifest() != (matched && ok) {
			return fmt.Sprintf("node %d: matches_manifest %v, its components and result say %v", i, n.GetMatchesManifest(), matched && ok)
		}
		all = all && n.GetMatchesManifest()
	}
	if r.GetMatchesManifest() != all {
		return fmt.Sprintf("matches_manifest %v, its nodes say %v", r.GetMatchesManifest(), all)
	}
	return ""
}

// firmwareJobsProblem checks the jobs[] of a firmware batch reply: each
// job is of a node that succeeded (the successful nodes that got one, in
// request order; a node the component filters leave out succeeds without
// one), with a job id of its own, under the parent response.job_id. A
// reply none of whose nodes succeeded (a batch refused as a whole
// included) carries no job.
func firmwareJobsProblem(r *rmspb.NodeBatchResponse, jobs []*rmspb.NodeFirmwareJobInfo) string {
	if len(jobs) == 0 {
		return ""
	}
	if r.GetStats().GetSuccessfulNodes() == 0 {
		return fmt.Sprintf("%v with no successful node, and %d jobs", r.GetStatus(), len(jobs))
	}
	if r.GetJobId() == "" {
		return fmt.Sprintf("%d jobs and no parent job_id", len(jobs))
	}
	results := r.GetNodeResults()
	ids := map[string]bool{r.GetJobId(): true}
	next := 0
	for i, j := range jobs {
		if j.GetJobId() == "" || ids[j.GetJobId()] {
			return fmt.Sprintf("job %d has job_id %q, not one of its own", i, clip(j.GetJobId(), 100))
		}
		ids[j.GetJobId()] = true
		for next < len(results) && (results[next].GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS ||
			results[next].GetNodeId() != j.GetNodeId()) {
			next++
		}
		if next == len(results) {
			return fmt.Sprintf("job %d is of node %q, which has no successful result after the previous job's", i, clip(j.GetNodeId(), 100))
		}
		next++
	}
	return ""
}

// echoedProblem bounds a field a reply echoes from the request.
func echoedProblem(field, v string) string {
	if len(v) > maxAnswerMessage {
		return fmt.Sprintf("a %d-byte %s", len(v), field)
	}
	return ""
}

// echoProblem checks what a firmware batch reply echoes of its request:
// one node result per node the request names, in request order, each
// with the node's node_id (BatchUpdateFirmwareByNodeType names none: one
// result per node of the type, each with an id).
func echoProblem(req, reply proto.Message) string {
	type withNodes interface{ GetNodes() *rmspb.NodeSet }
	type withBatch interface {
		GetResponse() *rmspb.NodeBatchResponse
		GetJobs() []*rmspb.NodeFirmwareJobInfo
	}
	b, ok := reply.(withBatch)
	if !ok {
		return ""
	}
	results := b.GetResponse().GetNodeResults()
	r, ok := req.(withNodes)
	if !ok {
		for i, nr := range results {
			if nr.GetNodeId() == "" {
				return fmt.Sprintf("node result %d names no node", i)
			}
		}
		return ""
	}
	nodes := r.GetNodes().GetNodes()
	if len(results) != len(nodes) {
		return fmt.Sprintf("%d node results for %d nodes", len(results), len(nodes))
	}
	for i, n := range nodes {
		if results[i].GetNodeId() != n.GetNodeId() {
			return fmt.Sprintf("node result %d is of node %q, the request's node %d is %q", i, clip(results[i].GetNodeId(), 100), i, clip(n.GetNodeId(), 100))
		}
	}
	return ""
}
