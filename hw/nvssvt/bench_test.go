package nvssvt_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rmsd/rmsd/hw/nvssvt"
)

// BenchmarkRunVsPlainExec compares one scan through the Runner (log
// directory, process group, captured output, report parsed) with the
// baseline: the same helper program run with exec.Command and its report
// read. Compare the two sub-benchmarks' ns/op:
//
//	go test -run '^$' -bench RunVsPlainExec -benchtime 50x ./hw/nvssvt
func BenchmarkRunVsPlainExec(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("baseline", func(b *testing.B) {
		dir := b.TempDir()
		for i := 0; b.Loop(); i++ {
			logDir := filepath.Join(dir, strconv.Itoa(i))
			if err := os.Mkdir(logDir, 0o700); err != nil {
				b.Fatal(err)
			}
			report := filepath.Join(logDir, nvssvt.ReportFile)
			cmd := exec.Command(exe, helperCommand, modePass, nvssvt.FlagDUTID, "n", nvssvt.FlagLogDir, logDir, nvssvt.FlagReport, report)
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
			data, err := os.ReadFile(report)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := nvssvt.ParseReport(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("runner", func(b *testing.B) {
		r := nvssvt.New(nvssvt.Config{Path: exe, Args: []string{helperCommand, modePass}, LogRoot: b.TempDir(), Timeout: time.Minute})
		for i := 0; b.Loop(); i++ {
			if _, err := r.Run(context.Background(), helperScan(strconv.Itoa(i)), nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
