package rmsserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// recordFuzzSeeds makes the tests write the seed corpus of the Fuzz
// targets: every request a test sends through the generated client to an
// RPC a fuzz target drives, deduplicated. Regenerate with
//
//	go test -count=1 ./grpc/rmsserver -args -record-fuzz-seeds
//
// It replaces testdata/fuzz/Fuzz*/seed-*; inputs the fuzzer found (other
// names) stay.
var recordFuzzSeeds = flag.Bool("record-fuzz-seeds", false,
	"write the requests the tests send to testdata/fuzz/<target>/seed-* as the fuzz targets' seed corpus")

// Bounds of the recorded corpus: seeds the fuzzer can mutate quickly, and
// a corpus small enough to commit. Larger requests (the oversized-id and
// bounded-message tests send 100 KB ones) have tests of their own.
const (
	maxSeedBytes     = 16 << 10
	maxSeedsByMethod = 24
)

// seedRecorder collects requests, by fuzz target, then writes them.
type seedRecorder struct {
	mu sync.Mutex
	// files maps a method to its seeds, by path.
	files map[string]map[string][]byte
}

var seeds = &seedRecorder{files: map[string]map[string][]byte{}}

// record is a client interceptor: it keeps the request of every call to
// an RPC some fuzz target drives, when -record-fuzz-seeds is set.
func (r *seedRecorder) record(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if *recordFuzzSeeds {
		if target, index, ok := fuzzTargetOf(method); ok {
			if msg, isMsg := req.(proto.Message); isMsg {
				if data, err := (proto.MarshalOptions{Deterministic: true}).Marshal(msg); err == nil {
					r.add(target, method, index, data)
				}
			}
		}
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

func (r *seedRecorder) add(target, method string, index int, data []byte) {
	if len(data) > maxSeedBytes {
		return
	}
	sum := sha256.Sum256(append([]byte{byte(index)}, data...))
	name := fmt.Sprintf("seed-%s-%s", method[strings.LastIndex(method, "/")+1:], hex.EncodeToString(sum[:6]))
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.files[method] == nil {
		r.files[method] = map[string][]byte{}
	}
	r.files[method][filepath.Join("testdata", "fuzz", target, name)] = corpusFile(uint8(index), data)
}

// corpusFile encodes the arguments of a fuzz target taking (uint8, []byte)
// in the Go fuzzing corpus format.
func corpusFile(rpc uint8, data []byte) []byte {
	return []byte(fmt.Sprintf("go test fuzz v1\nbyte(%q)\n[]byte(%q)\n", rune(rpc), data))
}

// write replaces the seed files of every fuzz target with the recorded ones.
func (r *seedRecorder) write() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range fuzzFamilies {
		dir := filepath.Join("testdata", "fuzz", f.target)
		old, err := filepath.Glob(filepath.Join(dir, "seed-*"))
		if err != nil {
			return err
		}
		for _, p := range old {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	written := 0
	for _, files := range r.files {
		// At most maxSeedsByMethod per method, chosen by name (a hash of
		// the content): tests that send many near-identical requests do not
		// swamp the corpus.
		paths := make([]string, 0, len(files))
		for p := range files {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		if len(paths) > maxSeedsByMethod {
			paths = paths[:maxSeedsByMethod]
		}
		for _, p := range paths {
			if err := os.WriteFile(p, files[p], 0o644); err != nil {
				return err
			}
			written++
		}
	}
	fmt.Fprintf(os.Stderr, "recorded %d fuzz seeds\n", written)
	return nil
}
