package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/bojand/ghz/runner"
	"github.com/jhump/protoreflect/desc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/rmsd/rmsd/grpc/adminpb"
	"github.com/rmsd/rmsd/grpc/rmspb"

	"github.com/rmsd/rmsd/bench/procstat"
)

// measurement is one ghz run of one RPC against one server.
type measurement struct {
	rpc, server string
	round       int
	count       uint64          // calls answered or failed
	errors      uint64          // calls that failed (any status but OK)
	wall        time.Duration   // ghz's total time of the run
	latencies   []time.Duration // of every call, failed ones included
	cpu         time.Duration   // the server's CPU time over the run (and, for admissions on rmsd, until its jobs ended)
	cpuCalls    time.Duration   // the part of cpu until the last answer
	otherCPU    time.Duration   // the other server's CPU time meanwhile (it is idle)
	admitted    int             // admissions rmsd recorded in its apply history; -1 where that does not apply
	settle      time.Duration   // after an admission run on rmsd: how long its jobs took to end after the last answer
}

// rps is the run's rate of calls.
func (m measurement) rps() float64 {
	if m.wall <= 0 {
		return 0
	}
	return float64(m.count) / m.wall.Seconds()
}

// bench holds what every run needs.
type bench struct {
	o        options
	d        *daemon
	bare     *server
	fix      fixture
	protoset []byte
}

// measure runs w against s (the other server being other) in round: for a
// read, ghz for the run's duration; for an admission, a fixed number of
// calls, then on rmsd the wait until every job they started has ended.
// warm is the unmeasured warm-up run: shorter, and round is -1.
func (b *bench) measure(ctx context.Context, w workload, s, other *server, round int, warm bool) (measurement, error) {
	m := measurement{rpc: w.name, server: s.name, round: round, admitted: -1}
	prefix := fmt.Sprintf("load-%d-%s", round, s.name)
	opts := []runner.Option{
		runner.WithProtosetBinary(b.protoset),
		runner.WithInsecure(true),
		runner.WithConcurrency(b.o.concurrency),
		runner.WithTimeout(time.Minute),
		runner.WithDialTimeout(10 * time.Second),
		runner.WithName(fmt.Sprintf("%s %s round %d", w.name, s.name, round)),
	}
	if w.admission {
		n := b.o.admissions
		if warm {
			n = b.o.concurrency
		}
		opts = append(opts, runner.WithTotalRequests(n),
			runner.WithBinaryDataFunc(func(_ *desc.MethodDescriptor, cd *runner.CallData) []byte {
				req, err := proto.Marshal(w.request(prefix, cd.RequestNumber))
				if err != nil { // a request built from decoded messages always encodes
					panic(err)
				}
				return req
			}))
	} else {
		req, err := proto.Marshal(w.request(prefix, 0))
		if err != nil {
			return m, err
		}
		d := b.o.duration
		if warm {
			d = b.o.warmup
		}
		data := runner.WithBinaryData(req)
		if len(req) == 0 { // ghz takes empty binary data for none
			data = runner.WithDataFromJSON("{}")
		}
		opts = append(opts, runner.WithRunDuration(d), runner.WithDurationStopAction("wait"), data)
	}

	cpu0, err := procstat.CPUTime(s.PID())
	if err != nil {
		return m, err
	}
	other0, err := procstat.CPUTime(other.PID())
	if err != nil {
		return m, err
	}
	rep, err := runner.Run(w.ghzCall(), s.target(), opts...)
	if err != nil {
		msg := err.Error()
		if len(msg) > 300 { // ghz repeats a call's error once per call
			msg = msg[:300] + "..."
		}
		return m, fmt.Errorf("ghz %s on %s: %s", w.name, s.name, msg)
	}
	answered, err := procstat.CPUTime(s.PID())
	if err != nil {
		return m, err
	}
	m.cpuCalls = answered - cpu0
	if w.admission && s == &b.d.server {
		start := time.Now()
		if err := b.settle(ctx); err != nil {
			return m, err
		}
		m.settle = time.Since(start)
	}
	cpu1, err := procstat.CPUTime(s.PID())
	if err != nil {
		return m, err
	}
	other1, err := procstat.CPUTime(other.PID())
	if err != nil {
		return m, err
	}
	m.cpu, m.otherCPU = cpu1-cpu0, other1-other0
	m.count, m.wall = rep.Count, rep.Total
	for _, d := range rep.Details {
		m.latencies = append(m.latencies, d.Latency)
		if d.Error != "" || d.Status != "OK" {
			m.errors++
		}
	}
	if w.admission && s == &b.d.server {
		if m.admitted, err = b.admitted(ctx, prefix); err != nil {
			return m, err
		}
	}
	return m, nil
}

// settle waits until rmsd holds no node: every job the admissions started
// has ended.
func (b *bench) settle(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, b.o.settle)
	defer cancel()
	return poll(ctx, "the admitted jobs to end", func() (bool, error) {
		l, err := b.d.admin.ListActors(ctx, &adminpb.ListActorsRequest{})
		if err != nil {
			return false, fmt.Errorf("admin ListActors: %w", err)
		}
		return l.GetHeldNodes() == 0, nil
	})
}

// admitted counts the apply history records of the run whose rack ids
// start with prefix: the admissions rmsd accepted.
func (b *bench) admitted(ctx context.Context, prefix string) (int, error) {
	h, err := b.d.rms.GetFirmwareObjectHistory(ctx, &rmspb.GetFirmwareObjectHistoryRequest{ObjectId: b.fix.objectID})
	if err != nil {
		return 0, fmt.Errorf("GetFirmwareObjectHistory: %w", err)
	}
	n := 0
	for _, r := range h.GetRecords() {
		if strings.HasPrefix(r.GetRackId(), prefix+"-") {
			n++
		}
	}
	return n, nil
}

// protosetOf is the descriptor set ghz decodes requests with: the file
// that defines msg's service and every file it imports, dependencies
// first.
func protosetOf(msg proto.Message) ([]byte, error) {
	var set descriptorpb.FileDescriptorSet
	seen := map[string]bool{}
	var add func(fd protoreflect.FileDescriptor)
	add = func(fd protoreflect.FileDescriptor) {
		if seen[fd.Path()] {
			return
		}
		seen[fd.Path()] = true
		for i := range fd.Imports().Len() {
			add(fd.Imports().Get(i).FileDescriptor)
		}
		set.File = append(set.File, protodesc.ToFileDescriptorProto(fd))
	}
	add(msg.ProtoReflect().Descriptor().ParentFile())
	return proto.Marshal(&set)
}
