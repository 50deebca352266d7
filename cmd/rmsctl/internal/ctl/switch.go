package ctl

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

func (a *app) switchCommand() *cobra.Command {
	sw := &cobra.Command{Use: "switch", Short: "NVLink switch trays: NVOS images and passwords"}
	images := &cobra.Command{Use: "images", Short: "NVOS system images of switches"}
	images.AddCommand(a.switchImagesListCommand(), a.switchImagesApplyCommand())
	sw.AddCommand(images, a.switchPasswordCommand())
	return sw
}

// imageEntry is one file of ListSwitchSystemImages' images_json, an
// object keyed by file name (NVUE's listing, as upstream passes it).
type imageEntry struct {
	Path    string `json:"path"`
	BuildID string `json:"build_id"`
}

func (a *app) switchImagesListCommand() *cobra.Command {
	var rack string
	cmd := &cobra.Command{
		Use:   "list --rack RACK NODE_ID",
		Short: "The NVOS image files staged on a registered switch (ListSwitchSystemImages)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			resp, err := call(cmd.Context(), a, "ListSwitchSystemImages", &rmspb.ListSwitchSystemImagesRequest{RackId: rack, NodeId: args[0]}, rmspb.RackManagerClient.ListSwitchSystemImages)
			if err != nil {
				return err
			}
			if err := a.emit(resp, func(w io.Writer) {
				var entries map[string]imageEntry
				if err := json.Unmarshal([]byte(resp.GetImagesJson()), &entries); err != nil {
					fmt.Fprintln(w, resp.GetImagesJson())
					return
				}
				t := newTable(w, "FILE", "BUILD", "PATH")
				for _, name := range slices.Sorted(maps.Keys(entries)) {
					t.row(name, entries[name].BuildID, entries[name].Path)
				}
				t.flush()
			}); err != nil {
				return err
			}
			return inBand("ListSwitchSystemImages", resp.GetStatus(), resp.GetErrorMessage())
		},
	}
	rackFlag(cmd, &rack)
	return cmd
}

func (a *app) switchImagesApplyCommand() *cobra.Command {
	var rack, image, imageName string
	var w watchFlags
	cmd := &cobra.Command{
		Use:   "apply --rack RACK --image FILE NODE_ID... [--watch]",
		Short: "Install an NVOS image on switches of a rack (UpdateSwitchSystemImage)",
		Long: `Install an NVOS image on switches of RACK in the nodes file: one parent job,
one child per switch. FILE is a path on rmsd's host, inside its firmware_dir
(relative to it, or absolute); its name, or --image-name, must hold the NVOS
version X.Y.Z. With --watch, follow the parent as "rmsctl jobs watch" does.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			nodes, err := a.suppliedNodes(rack, args)
			if err != nil {
				return err
			}
			if imageName == "" {
				imageName = filepath.Base(image)
			}
			req := &rmspb.UpdateSwitchSystemImageRequest{Nodes: nodes, LocalFilePath: image, ImageFilename: imageName}
			resp, err := call(cmd.Context(), a, "UpdateSwitchSystemImage", req, rmspb.RackManagerClient.UpdateSwitchSystemImage)
			if err != nil {
				return err
			}
			if err := a.emit(resp, func(w io.Writer) {
				batchSummary(w, resp.GetResponse())
				jobsTable(w, resp.GetJobs())
			}); err != nil {
				return err
			}
			return a.afterStart(cmd, w, "UpdateSwitchSystemImage", resp.GetResponse())
		},
	}
	rackFlag(cmd, &rack)
	cmd.Flags().StringVar(&image, "image", "", "NVOS image file on rmsd's host, inside its firmware_dir")
	_ = cmd.MarkFlagRequired("image")
	cmd.Flags().StringVar(&imageName, "image-name", "", "the image's file name on the switch (default: the name of --image)")
	a.nodesFlag(cmd)
	w.flags(cmd)
	return cmd
}
