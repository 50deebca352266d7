package ctl

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// accessTokenEnv names the environment variable that can hold the
// artifact server's access token of `firmware objects add`.
const accessTokenEnv = "RMSCTL_ACCESS_TOKEN"

func (a *app) firmwareObjectsCommand() *cobra.Command {
	objects := &cobra.Command{Use: "objects", Short: "The firmware catalog: firmware objects made from manifests"}
	objects.AddCommand(a.objectsAddCommand(), a.objectsListCommand(), a.objectsGetCommand(),
		a.objectsDeleteCommand(), a.objectsSetDefaultCommand(), a.objectsHistoryCommand())
	return objects
}

// readManifest reads -f: either a firmware manifest (the "SOT JSON"), or
// an AddFirmwareObjectRequest in protobuf JSON that carries one in
// config_json, as `rmsd --simulate` writes simulated-release.json.
func readManifest(path string) (*rmspb.AddFirmwareObjectRequest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usageError("-f: %w", err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return nil, usageError("-f %s: not a JSON object: %w", path, err)
	}
	_, snake := keys["config_json"]
	_, camel := keys["configJson"]
	if !snake && !camel {
		return &rmspb.AddFirmwareObjectRequest{ConfigJson: string(data)}, nil
	}
	var req rmspb.AddFirmwareObjectRequest
	if err := readProtoJSON("-f", path, &req); err != nil {
		return nil, err
	}
	return &req, nil
}

func (a *app) objectsAddCommand() *cobra.Command {
	var file, hardwareType, tokenFile string
	var setDefault, wait bool
	var waitFor time.Duration
	cmd := &cobra.Command{
		Use:   "add -f MANIFEST.json [--default]",
		Short: "Add a firmware object from a manifest (AddFirmwareObject); its artifacts then download in the background",
		Long: `Add a firmware object from a manifest file: the manifest itself, or an
AddFirmwareObjectRequest in protobuf JSON such as the simulated-release.json
rmsd --simulate writes. The artifact server's access token, when one is needed,
comes from --access-token-file or $` + accessTokenEnv + `; it is never printed.
With --wait, rmsctl polls GetFirmwareObject until the object is available.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			req, err := readManifest(file)
			if err != nil {
				return err
			}
			if hardwareType != "" {
				req.HardwareType = hardwareType
			}
			if setDefault {
				req.SetDefault = true
			}
			if tokenFile != "" {
				b, err := os.ReadFile(tokenFile)
				if err != nil {
					return usageError("--access-token-file: %w", err)
				}
				req.AccessToken = proto.String(strings.TrimSpace(string(b)))
			} else if tok := os.Getenv(accessTokenEnv); tok != "" {
				req.AccessToken = proto.String(tok)
			}
			resp, err := call(cmd.Context(), a, "AddFirmwareObject", req, rmspb.RackManagerClient.AddFirmwareObject)
			if err != nil {
				return err
			}
			obj := resp.GetObject()
			if wait && !obj.GetAvailable() {
				if obj, err = a.waitAvailable(cmd.Context(), obj.GetId(), waitFor); err != nil {
					return err
				}
				resp.Object = obj
			}
			return a.emit(resp, func(w io.Writer) { objectLine(w, obj) })
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "manifest file, or an AddFirmwareObjectRequest in protobuf JSON")
	_ = cmd.MarkFlagRequired("file")
	cmd.Flags().BoolVar(&setDefault, "default", false, "make the object the default of its hardware type")
	cmd.Flags().StringVar(&hardwareType, "hardware-type", "", "hardware type of the object, e.g. gb200-nvl (overrides the request file's)")
	cmd.Flags().StringVar(&tokenFile, "access-token-file", "", "file holding the artifact server's access token (else $"+accessTokenEnv+")")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the object's artifacts are downloaded and it is available")
	cmd.Flags().DurationVar(&waitFor, "wait-timeout", 30*time.Minute, "how long --wait waits")
	return cmd
}

// waitAvailable polls GetFirmwareObject every second until the object is
// available or limit has passed.
func (a *app) waitAvailable(ctx context.Context, id string, limit time.Duration) (*rmspb.FirmwareObject, error) {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		resp, err := call(ctx, a, "GetFirmwareObject", &rmspb.GetFirmwareObjectRequest{Id: id}, rmspb.RackManagerClient.GetFirmwareObject)
		if err != nil {
			return nil, err
		}
		if resp.GetObject().GetAvailable() {
			return resp.GetObject(), nil
		}
		select {
		case <-ctx.Done():
			return nil, &exitError{code: ExitInterrupted, err: fmt.Errorf("waiting for firmware object %s: interrupted", id)}
		case <-deadline.C:
			return nil, failed("firmware object %s is not available after %s: its download failed or is still running (see rmsd's log)", id, limit)
		case <-tick.C:
		}
	}
}

func objectLine(w io.Writer, o *rmspb.FirmwareObject) {
	t := newTable(w, "ID", "HARDWARE_TYPE", "AVAILABLE", "DEFAULT", "UPDATED")
	t.row(o.GetId(), o.GetHardwareType(), yesNo(o.GetAvailable()), yesNo(o.GetIsDefault()), when(o.GetUpdated()))
	t.flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func (a *app) objectsListCommand() *cobra.Command {
	var onlyAvailable bool
	var hardwareType string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List firmware objects (ListFirmwareObjects)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			resp, err := call(cmd.Context(), a, "ListFirmwareObjects",
				&rmspb.ListFirmwareObjectsRequest{OnlyAvailable: onlyAvailable, HardwareType: hardwareType}, rmspb.RackManagerClient.ListFirmwareObjects)
			if err != nil {
				return err
			}
			return a.emit(resp, func(w io.Writer) {
				t := newTable(w, "ID", "HARDWARE_TYPE", "AVAILABLE", "DEFAULT", "UPDATED")
				for _, o := range resp.GetObjects() {
					t.row(o.GetId(), o.GetHardwareType(), yesNo(o.GetAvailable()), yesNo(o.GetIsDefault()), when(o.GetUpdated()))
				}
				t.flush()
			})
		},
	}
	cmd.Flags().BoolVar(&onlyAvailable, "available", false, "only objects whose artifacts are downloaded")
	cmd.Flags().StringVar(&hardwareType, "hardware-type", "", "only objects of this hardware type")
	return cmd
}

func (a *app) objectsGetCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "get OBJECT_ID",
		Short: "Show a firmware object and its components (GetFirmwareObject)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			resp, err := call(cmd.Context(), a, "GetFirmwareObject", &rmspb.GetFirmwareObjectRequest{Id: args[0]}, rmspb.RackManagerClient.GetFirmwareObject)
			if err != nil {
				return err
			}
			return a.emit(resp, func(w io.Writer) {
				o := resp.GetObject()
				objectLine(w, o)
				t := newTable(w, "NODE_TYPE", "COMPONENT", "VERSION", "ARTIFACTS")
				for _, dc := range o.GetMetadata().GetDeviceComponents() {
					typ := nodeType(dc.GetNodeType())
					if typ == "" {
						typ = dc.GetDeviceType()
					}
					for _, c := range dc.GetComponents() {
						var files []string
						for _, art := range c.GetArtifacts() {
							files = append(files, art.GetFilename())
						}
						t.row(typ, c.GetName(), c.GetVersion(), strings.Join(files, ","))
					}
				}
				for _, img := range o.GetMetadata().GetSwitchSystemImages() {
					t.row("switch system image ("+img.GetSoftwareType()+")", img.GetPackageName(), img.GetVersion(), img.GetImageFilename())
				}
				t.flush()
			})
		},
	}
}

func (a *app) objectsDeleteCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "delete OBJECT_ID",
		Short: "Delete a firmware object and its cached artifacts (DeleteFirmwareObject)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			resp, err := call(cmd.Context(), a, "DeleteFirmwareObject", &rmspb.DeleteFirmwareObjectRequest{Id: args[0]}, rmspb.RackManagerClient.DeleteFirmwareObject)
			if err != nil {
				return err
			}
			return a.emitOperation("DeleteFirmwareObject", resp, resp.GetResponse())
		},
	}
}

func (a *app) objectsSetDefaultCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "set-default OBJECT_ID",
		Short: "Make a firmware object the default of its hardware type (SetDefaultFirmwareObject)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			resp, err := call(cmd.Context(), a, "SetDefaultFirmwareObject", &rmspb.SetDefaultFirmwareObjectRequest{ObjectId: args[0]}, rmspb.RackManagerClient.SetDefaultFirmwareObject)
			if err != nil {
				return err
			}
			return a.emit(resp, func(w io.Writer) { objectLine(w, resp.GetObject()) })
		},
	}
}

func (a *app) objectsHistoryCommand() *cobra.Command {
	var racks []string
	cmd := &cobra.Command{
		Use:   "history [OBJECT_ID]",
		Short: "Applies of stored firmware objects, newest first (GetFirmwareObjectHistory)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := &rmspb.GetFirmwareObjectHistoryRequest{RackIds: racks}
			if len(args) == 1 {
				req.ObjectId = args[0]
			}
			resp, err := call(cmd.Context(), a, "GetFirmwareObjectHistory", req, rmspb.RackManagerClient.GetFirmwareObjectHistory)
			if err != nil {
				return err
			}
			return a.emit(resp, func(w io.Writer) {
				t := newTable(w, "APPLIED", "OBJECT", "RACK", "HARDWARE_TYPE", "CHANNEL", "NODES", "IN_CATALOG")
				for _, r := range resp.GetRecords() {
					t.row(when(r.GetAppliedAt()), r.GetObjectId(), r.GetRackId(), r.GetHardwareType(), r.GetFirmwareType(),
						fmt.Sprint(len(r.GetNodeIds())), yesNo(r.GetFirmwareAvailable()))
				}
				t.flush()
			})
		},
	}
	cmd.Flags().StringArrayVar(&racks, "rack", nil, "only applies to this rack (repeatable)")
	return cmd
}
