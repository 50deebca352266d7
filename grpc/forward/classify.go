package forward

import (
	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
	"github.com/rmsd/rmsd/messages"
)

// Class says which member serves a method.
type Class int

const (
	// Local methods are served by the member that received the call: they
	// read the hardware or the shared store and hold nothing in a job
	// engine, so any member gives the same answer.
	Local Class = iota + 1
	// ByJob methods name a job: the owner of the job's rack answers.
	ByJob
	// ByRack methods admit a job, take a lease or write nodes: the owner
	// of the request's rack serves them, so that its engine alone decides
	// what the rack's nodes do.
	ByRack
)

// String names the class as docs/cluster.md does.
func (c Class) String() string {
	switch c {
	case Local:
		return "Local"
	case ByJob:
		return "ByJob"
	case ByRack:
		return "ByRack"
	}
	return "unclassified"
}

// Span says what happens to a ByRack request whose nodes are in several
// racks.
type Span int

const (
	// NoSpan methods act on one node or one rack. Those whose requests can
	// name nodes of several racks (oneRackHandlers) refuse such a request
	// themselves, in band and before acting, as a single rmsd does: it
	// goes whole to the first rack's owner, which answers that refusal.
	// Any other is refused here (FAILED_PRECONDITION).
	NoSpan Span = iota
	// SpanJobs splits it by rack, forwards each part to its owner (each
	// admits a batch of its own) and answers a cluster parent over them.
	SpanJobs
	// SpanCalls splits it by rack, forwards each part to its owner and
	// merges the synchronous replies.
	SpanCalls
)

// Route is how one method is served.
type Route struct {
	Class Class
	// Span is what a request over several racks does (ByRack only).
	Span Span
	// JobType is the type of the racks' batches (SpanJobs only): the
	// cluster parent's.
	JobType messages.JobType
}

func local() Route                        { return Route{Class: Local} }
func byJob() Route                        { return Route{Class: ByJob} }
func byRack() Route                       { return Route{Class: ByRack} }
func spanCalls() Route                    { return Route{Class: ByRack, Span: SpanCalls} }
func spanJobs(t messages.JobType) Route   { return Route{Class: ByRack, Span: SpanJobs, JobType: t} }
func v1(m string) string                  { return "/" + rmspb.RackManager_ServiceDesc.ServiceName + "/" + m }
func v2(m string) string                  { return "/" + rmspbv2.RackManagerV2_ServiceDesc.ServiceName + "/" + m }
func routeOf(method string) (Route, bool) { r, ok := routes[method]; return r, ok }

// RouteOf returns how method (a full gRPC method name) is served; false
// for a method of neither RMS service.
func RouteOf(method string) (Route, bool) { return routeOf(method) }

// oneRackHandlers are the NoSpan methods whose requests may name nodes
// of several racks, and whose handlers refuse such a request before
// acting (a cold reboot is of one rack; a fabric reconcile configures one
// rack): a test checks that every other NoSpan method names one rack at
// most.
var oneRackHandlers = map[string]bool{
	v1("ExecuteColdReboot"):             true,
	v2("ConfigureScaleUpFabricManager"): true,
}

// routes classify every method of both services; a test fails when one is
// missing. docs/cluster.md (Forwarding) argues each Local entry.
var routes = map[string]Route{
	// Reads of what the receiving member can see as well as the owner:
	// the build, the shared store's nodes and racks, the BMCs and switches
	// (read without a lease, as a single rmsd reads them).
	v1("GetVersion"):                                local(),
	v1("ListNodeInventory"):                         local(),
	v1("ListRacks"):                                 local(),
	v1("GetPowerState"):                             local(),
	v1("BatchGetPowerState"):                        local(),
	v1("GetNodeDeviceInfo"):                         local(),
	v1("ListNodeDeviceInfoByNodeType"):              local(),
	v1("BatchGetNodeDeviceInfo"):                    local(),
	v1("GetNodeFirmwareInventory"):                  local(),
	v1("BatchGetFirmwareInventory"):                 local(),
	v1("GetRackFirmwareInventory"):                  local(),
	v1("CompareFirmwareObject"):                     local(),
	v1("ListSwitchFirmware"):                        local(),
	v1("ListSwitchSystemImages"):                    local(),
	v1("GetScaleUpFabricStatus"):                    local(),
	v1("InspectScaleUpFabrics"):                     local(),
	v1("BatchGetScaleUpFabricServiceStatus"):        local(),
	v1("GetScaleUpFabricState"):                     local(),
	v1("BatchCollectSwitchSpdmAttestationEvidence"): local(),
	// The firmware catalog lives in the shared store: no rack, no engine.
	v1("AddFirmwareObject"):        local(),
	v1("GetFirmwareObject"):        local(),
	v1("ListFirmwareObjects"):      local(),
	v1("DeleteFirmwareObject"):     local(),
	v1("SetDefaultFirmwareObject"): local(),
	v1("GetFirmwareObjectHistory"): local(),

	// Job status: the job's rack's owner answers.
	v1("GetJobStatus"):                           byJob(),
	v1("GetFirmwareJobStatus"):                   byJob(),
	v1("GetSwitchSystemImageJobStatus"):          byJob(),
	v1("GetConfigureSwitchCertificateJobStatus"): byJob(),

	// One node, one rack, or a rack as a whole.
	v1("SetPowerState"):                           byRack(),
	v1("ExecuteColdReboot"):                       byRack(),
	v1("UpdateNode"):                              byRack(),
	v1("DeleteNode"):                              byRack(),
	v1("UpdateFirmware"):                          byRack(),
	v1("BatchUpdateFirmwareByNodeType"):           byRack(),
	v1("PushSwitchFirmware"):                      byRack(),
	v1("ConfigureScaleUpFabricManager"):           byRack(),
	v1("SetScaleUpFabricTelemetryInterfaceState"): byRack(),
	v2("ConfigureScaleUpFabricManager"):           byRack(),

	// Synchronous changes of nodes in any number of racks.
	v1("BatchSetPowerState"):         spanCalls(),
	v1("BatchSetScaleUpFabricState"): spanCalls(),
	v1("CreateNodes"):                spanCalls(),

	// Batches: one job per rack under a cluster parent.
	v1("BatchUpdateFirmware"):               spanJobs(messages.TypeFirmwareUpdate),
	v1("ApplyStoredFirmwareObject"):         spanJobs(messages.TypeFirmwareUpdate),
	v1("ApplyFirmwareObject"):               spanJobs(messages.TypeFirmwareUpdate),
	v1("UpdateSwitchSystemImage"):           spanJobs(messages.TypeSwitchSystemImageUpdate),
	v1("ApplySwitchSystemImage"):            spanJobs(messages.TypeSwitchSystemImageUpdate),
	v1("ApplyStoredSwitchSystemImage"):      spanJobs(messages.TypeSwitchSystemImageUpdate),
	v1("BatchResetSwitchFactoryDefault"):    spanJobs(messages.TypeSwitchFactoryDefaultReset),
	v1("BatchResetSwitchSdnFactoryDefault"): spanJobs(messages.TypeSwitchSdnFactoryDefaultReset),
	v1("ConfigureSwitchCertificate"):        spanJobs(messages.TypeSwitchCertificate),
	v1("BatchDisableSwitchMtls"):            spanJobs(messages.TypeSwitchMtlsDisable),
	v1("UpdateSwitchSystemPassword"):        spanJobs(messages.TypeSwitchSystemPasswordUpdate),
	v2("StartSystemValidation"):             spanJobs(messages.TypeSystemValidation),
}
