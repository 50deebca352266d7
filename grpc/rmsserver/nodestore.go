package rmsserver

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/hw/racks"
)

// A node change (CreateNodes, UpdateNode, DeleteNode) is written to the
// store before it is made; a store that did not take it within [storage]
// timeout_seconds refuses it (racks.ErrUnavailable). Such a call answers
// UNAVAILABLE rather than an in-band FAILURE: nothing is wrong with the
// request, and the caller should retry it once the store answers. The
// registry shows no change the store did not take.

// nodeStoreUnavailable is the UNAVAILABLE answer of a node change the
// store did not take; detail says what was and was not changed.
func nodeStoreUnavailable(detail string) error {
	return status.Error(codes.Unavailable, clip("node store unavailable: "+detail, maxMessage))
}

// nodeChangeStatus answers UNAVAILABLE when err is a change the store did
// not take, and nil otherwise (the handler answers in-band).
func nodeChangeStatus(err error) error {
	if !errors.Is(err, racks.ErrUnavailable) {
		return nil
	}
	return nodeStoreUnavailable(err.Error() + "; nothing was changed, retry once the store answers")
}

// createNodesStatus answers UNAVAILABLE when the store did not take some
// nodes of a CreateNodes batch (the first it refused fails the rest of
// the batch at once), naming the nodes not registered and how many were;
// nil when the store took every node it was asked to.
func createNodesStatus(added uint32, failures []string, errs []error) error {
	unavailable := false
	for _, err := range errs {
		unavailable = unavailable || errors.Is(err, racks.ErrUnavailable)
	}
	if !unavailable {
		return nil
	}
	return nodeStoreUnavailable(fmt.Sprintf("%d added, %d not registered; retry (CreateNodes is safe to repeat) once the store answers:\n%s",
		added, len(failures), strings.TrimSpace(summarise(failures, "\n"))))
}
