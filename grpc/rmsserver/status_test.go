package rmsserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/hw/firmware/catalog"
	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store"
)

func TestCatalogStatus(t *testing.T) {
	tests := []struct {
		give     error
		wantCode codes.Code
		wantMsg  string
	}{
		{&catalog.Error{Kind: catalog.ErrInvalid, Msg: "config_json: is empty"}, codes.InvalidArgument, "config_json: is empty"},
		{&catalog.Error{Kind: catalog.ErrNotFound, Msg: `firmware object "X_1" not found`}, codes.NotFound, `firmware object "X_1" not found`},
		{&catalog.Error{Kind: catalog.ErrExists, Msg: `firmware object "X_1" already exists`}, codes.AlreadyExists, `firmware object "X_1" already exists`},
		{catalog.ErrClosed, codes.Unavailable, "the firmware catalog is closed: rmsd is shutting down"},
		{fmt.Errorf("catalog: read the apply history: sqlstore: read: no answer from the database within 5s: %w", store.ErrUnavailable), codes.Unavailable,
			"catalog: read the apply history: sqlstore: read: no answer from the database within 5s: store: unavailable"},
		{fmt.Errorf("catalog: list firmware objects: %w", context.DeadlineExceeded), codes.DeadlineExceeded, "catalog: list firmware objects: context deadline exceeded"},
		{fmt.Errorf("catalog: list firmware objects: %w", context.Canceled), codes.Canceled, "catalog: list firmware objects: context canceled"},
		{errors.New("catalog: list firmware objects: sqlstore: disk I/O error"), codes.Internal, "firmware catalog: catalog: list firmware objects: sqlstore: disk I/O error"},
		{&catalog.Error{Kind: catalog.ErrInvalid, Msg: strings.Repeat("m", 10*maxMessage)}, codes.InvalidArgument, strings.Repeat("m", maxMessage-len("…")) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.wantCode.String(), func(t *testing.T) {
			st := status.Convert(catalogStatus(tt.give))
			if st.Code() != tt.wantCode || st.Message() != tt.wantMsg {
				t.Errorf("catalogStatus(%.80v) = %v %.100q, want %v %.100q", tt.give, st.Code(), st.Message(), tt.wantCode, tt.wantMsg)
			}
		})
	}
}

func TestEngineError(t *testing.T) {
	tests := []struct {
		give     error
		wantCode codes.Code
		wantMsg  string
	}{
		{fmt.Errorf("lease lease-1: %w: %w", messages.ErrRegistryNotReached, context.DeadlineExceeded), codes.DeadlineExceeded,
			"job engine did not answer before the deadline"},
		{fmt.Errorf("get job j1: %w", context.Canceled), codes.Canceled, "request cancelled"},
		{fmt.Errorf("create job j1: %w", messages.ErrEngineClosed), codes.Unavailable, "job engine is shutting down"},
		{errors.New("jobs: registry restarting"), codes.Internal, "job engine: jobs: registry restarting"},
		{errors.New(strings.Repeat("m", 10*maxMessage)), codes.Internal, "job engine: " + strings.Repeat("m", maxMessage-len("…")) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.wantCode.String(), func(t *testing.T) {
			st := status.Convert(engineError(tt.give))
			if st.Code() != tt.wantCode || st.Message() != tt.wantMsg {
				t.Errorf("engineError(%.80v) = %v %.100q, want %v %.100q", tt.give, st.Code(), st.Message(), tt.wantCode, tt.wantMsg)
			}
		})
	}
}
