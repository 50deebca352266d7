package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/racks"
	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/keyring"
	"github.com/rmsd/rmsd/store/sqlstore"
	"github.com/rmsd/rmsd/store/storetest"
)

const bmcPassword = "s3cr3t-bmc-password"

func keyLine(id string, b byte) string {
	return id + ":" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, 32)) + "\n"
}

func bmcNode(rack, id, password string) *rmspb.NodeInfo {
	t := rmspb.NodeType_COMPUTE_GB200_NVIDIA
	return &rmspb.NodeInfo{NodeId: id, RackId: rack, Type: &t, BmcEndpoint: &rmspb.Endpoint{
		Interface:   &rmspb.NetworkInterface{IpAddress: testBMCIP(rack, id), MacAddress: "aa:bb:cc:00:00:07"},
		Port:        443,
		Credentials: &rmspb.Credentials{Auth: &rmspb.Credentials_UserPass{UserPass: &rmspb.UsernamePassword{Username: "admin", Password: password}}},
	}}
}

// testBMCIP is a test node's BMC address, its own (a BMC is registered
// under one node only) and the same every time.
func testBMCIP(rack, id string) string {
	h := fnv.New32a()
	h.Write([]byte(rack + "/" + id))
	v := h.Sum32()
	return fmt.Sprintf("10.%d.%d.%d", byte(v>>16), byte(v>>8), byte(v))
}

func inventoryIDs(t *testing.T, client rmspb.RackManagerClient) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	inv, err := client.ListNodeInventory(ctx, &rmspb.ListNodeInventoryRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, n := range inv.GetNodes() {
		ids = append(ids, n.GetRackId()+"/"+n.GetNodeId())
	}
	slices.Sort(ids)
	return ids
}

// TestRegisteredNodesSurviveARestartSealed: with a key file, registered
// nodes come back after a restart with their credentials, which the store
// only holds encrypted; a new first key re-seals them; without a key file
// rmsd says nodes are not persisted, and they are not.
func TestRegisteredNodesSurviveARestartSealed(t *testing.T) {
	for _, b := range []struct {
		name string
		env  func(t *testing.T, dir string) (env []string, open func(context.Context) (store.Store, error))
	}{
		{"sqlite", func(t *testing.T, dir string) ([]string, func(context.Context) (store.Store, error)) {
			path := filepath.Join(dir, "rmsd.db")
			return []string{"RMS_STORAGE__SQLITE_PATH=" + path}, func(ctx context.Context) (store.Store, error) {
				return sqlstore.OpenSQLite(ctx, path, sqlstore.Options{})
			}
		}},
		{"postgres", func(t *testing.T, dir string) ([]string, func(context.Context) (store.Store, error)) {
			url := storetest.TempPostgresDatabase(t)
			return []string{"DATABASE_URL=" + url}, func(ctx context.Context) (store.Store, error) {
				return sqlstore.OpenPostgres(ctx, url, 2, sqlstore.Options{})
			}
		}},
	} {
		t.Run(b.name, func(t *testing.T) {
			dir := t.TempDir()
			storeEnv, openStore := b.env(t, dir)
			keys := filepath.Join(dir, "store-keys")
			if err := os.WriteFile(keys, []byte(keyLine("k1", 1)), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg := writeFile(t, insecureLoopback)
			env := append([]string{"RMS_ALLOW_INSECURE=1", "RMS_STORAGE__ENCRYPTION_KEY_FILE=" + keys}, storeEnv...)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()

			d := startRun(t, env, "--config", cfg)
			client := rmspb.NewRackManagerClient(d.conn)
			resp, err := client.CreateNodes(ctx, &rmspb.CreateNodesRequest{Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{
				bmcNode("rack-a", "tray-1", bmcPassword), bmcNode("rack-a", "tray-2", bmcPassword), bmcNode("rack-b", "tray-3", bmcPassword)}}})
			if err != nil || resp.GetStats().GetSuccessfulNodes() != 3 {
				t.Fatalf("CreateNodes = %v, %v", resp, err)
			}
			if _, err := client.DeleteNode(ctx, &rmspb.DeleteNodeRequest{RackId: "rack-a", NodeId: "tray-2"}); err != nil {
				t.Fatal(err)
			}
			stopRun(t, d)
			if strings.Contains(d.stdout.String(), bmcPassword) {
				t.Fatal("a password is in the log")
			}

			st, err := openStore(ctx)
			if err != nil {
				t.Fatal(err)
			}
			recs, err := st.ListNodes(ctx)
			_ = st.Close()
			if err != nil || len(recs) != 2 {
				t.Fatalf("stored nodes: %d, %v; want 2", len(recs), err)
			}
			for _, r := range recs {
				if r.KeyID != "k1" || bytes.Contains(r.Sealed, []byte(bmcPassword)) || bytes.Contains(r.Sealed, []byte("admin")) {
					t.Fatalf("stored node %s/%s is not sealed with k1", r.RackID, r.NodeID)
				}
			}
			if b.name == "sqlite" {
				for _, f := range []string{"rmsd.db", "rmsd.db-wal"} {
					if raw, err := os.ReadFile(filepath.Join(dir, f)); err == nil && bytes.Contains(raw, []byte(bmcPassword)) {
						t.Fatalf("%s holds the password in the clear", f)
					}
				}
			}

			// Rotation: a new first key; the old one still opens.
			if err := os.WriteFile(keys, []byte(keyLine("k2", 2)+keyLine("k1", 1)), 0o600); err != nil {
				t.Fatal(err)
			}
			d = startRun(t, env, "--config", cfg)
			client = rmspb.NewRackManagerClient(d.conn)
			if got := inventoryIDs(t, client); strings.Join(got, ",") != "rack-a/tray-1,rack-b/tray-3" {
				t.Fatalf("nodes after a restart: %v", got)
			}
			// The credentials came back: the same node again is accepted,
			// with another password it is refused.
			same, err := client.CreateNodes(ctx, &rmspb.CreateNodesRequest{Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{bmcNode("rack-a", "tray-1", bmcPassword)}}})
			if err != nil || same.GetStats().GetSuccessfulNodes() != 1 {
				t.Errorf("the restored node again: %v, %v", same.GetResponse(), err)
			}
			other, err := client.CreateNodes(ctx, &rmspb.CreateNodesRequest{Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{bmcNode("rack-a", "tray-1", "another")}}})
			if err != nil || other.GetStats().GetFailedNodes() != 1 {
				t.Errorf("the restored node with another password: %v, %v", other.GetResponse(), err)
			}
			stopRun(t, d)
			if !strings.Contains(d.stdout.String(), `"resealed":2`) {
				t.Errorf("no re-sealing logged after the rotation:\n%s", d.stdout.String())
			}
			st, err = openStore(ctx)
			if err != nil {
				t.Fatal(err)
			}
			recs, _ = st.ListNodes(ctx)
			_ = st.Close()
			for _, r := range recs {
				if r.KeyID != "k2" {
					t.Errorf("node %s/%s still sealed with %s after the rotation", r.RackID, r.NodeID, r.KeyID)
				}
			}

			// Without a key file: said once, nothing restored.
			d = startRun(t, append([]string{"RMS_ALLOW_INSECURE=1"}, storeEnv...), "--config", cfg)
			if got := inventoryIDs(t, rmspb.NewRackManagerClient(d.conn)); len(got) != 0 {
				t.Errorf("nodes restored without a key file: %v", got)
			}
			stopRun(t, d)
			if n := strings.Count(d.stdout.String(), "registered nodes are not persisted"); n != 1 {
				t.Errorf("%d log lines say nodes are not persisted, want 1", n)
			}
		})
	}
}

// TestANodeTheStoreDoesNotTakeIsNotRegistered: with the store gone, a
// registration is refused in-band naming the store, nothing is
// registered, and the refusal does not show the password.
func TestANodeTheStoreDoesNotTakeIsNotRegistered(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "store-keys")
	if err := os.WriteFile(keys, []byte(keyLine("k1", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(dir, "rmsd.db"), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reg := racks.New(nil)
	if err := restoreNodes(ctx, config.Storage{EncryptionKeyFile: keys}, st, reg, zerolog.Nop()); err != nil {
		t.Fatal(err)
	}
	_ = st.Close() // the store goes away under the running registry
	n := hw.Node{ID: "tray-1", RackID: "rack-a", Type: hw.ComputeGB200Nvidia,
		BMC: &hw.Endpoint{IP: "10.0.0.1", Credentials: hw.UserPass("admin", bmcPassword)}}
	errs := reg.Create([]hw.Node{n})
	if !errors.Is(errs[0], racks.ErrUnavailable) || !strings.Contains(errs[0].Error(), "node store") {
		t.Fatalf("registration with the store gone: %v, want a refusal naming the node store", errs[0])
	}
	if strings.Contains(errs[0].Error(), bmcPassword) {
		t.Fatal("the refusal shows the password")
	}
	if _, err := reg.Node("rack-a", "tray-1"); err == nil {
		t.Fatal("a node the store did not take is registered")
	}
}

// TestARackEmptiedByDeleteNodeOutlivesARestart: a rack whose last node was
// deleted stays registered, with its product family, after a restart; a
// rack whose nodes were stored before racks were recorded is recorded at
// start and outlives its last node too.
func TestARackEmptiedByDeleteNodeOutlivesARestart(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "store-keys")
	if err := os.WriteFile(keys, []byte(keyLine("k1", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config.Storage{EncryptionKeyFile: keys}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(dir, "rmsd.db"), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	node := func(rack, id string, typ hw.NodeType) hw.Node {
		return hw.Node{ID: id, RackID: rack, Type: typ, BMC: &hw.Endpoint{IP: testBMCIP(rack, id), Credentials: hw.UserPass("admin", bmcPassword)}}
	}
	// A node stored the way an earlier rmsd did: its record, no rack record.
	kr, err := keyring.Load(keys)
	if err != nil {
		t.Fatal(err)
	}
	old, err := (&nodeStore{st: st, keys: kr}).seal(node("rack-old", "tray-9", hw.ComputeGB200Nvidia))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.PutNode(ctx, old); err != nil {
		t.Fatal(err)
	}

	first := racks.New(nil)
	if err := restoreNodes(ctx, cfg, st, first, zerolog.Nop()); err != nil {
		t.Fatal(err)
	}
	for i, err := range first.Create([]hw.Node{node("rack-a", "tray-1", hw.ComputeGB200Nvidia), node("rack-b", "tray-2", hw.ComputeGB300Nvidia)}) {
		if err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
	}
	for _, ref := range []hw.Ref{{RackID: "rack-a", NodeID: "tray-1"}, {RackID: "rack-old", NodeID: "tray-9"}} {
		if err := first.Delete(ref.RackID, ref.NodeID); err != nil {
			t.Fatalf("delete %v: %v", ref, err)
		}
	}

	second := racks.New(nil) // the restart
	if err := restoreNodes(ctx, cfg, st, second, zerolog.Nop()); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(second.Racks(), ","); got != "rack-a,rack-b,rack-old" {
		t.Fatalf("racks after the restart: %s, want the emptied ones too", got)
	}
	if nodes, err := second.RackNodes("rack-a"); err != nil || len(nodes) != 0 {
		t.Errorf("rack-a after the restart: %v, %v; want registered and empty", nodes, err)
	}
	errs := second.Create([]hw.Node{node("rack-a", "tray-5", hw.ComputeGB300Nvidia), node("rack-a", "tray-6", hw.ComputeGB200Nvidia)})
	if errs[0] == nil || !strings.Contains(errs[0].Error(), "rack rack-a is a GB200 rack") {
		t.Errorf("a GB300 node in the emptied GB200 rack: %v, want refused by the rack's family", errs[0])
	}
	if errs[1] != nil {
		t.Errorf("a GB200 node in the emptied GB200 rack: %v", errs[1])
	}
}
