package nvossim

import (
	"crypto/tls"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/sim/overlap"
)

// Firmware component names as NVUE reports them under /nvue_v1/platform/firmware.
const (
	ComponentBMC   = "BMC"
	ComponentEROT  = "EROT"
	ComponentFPGA  = "FPGA"
	ComponentBIOS  = "BIOS"
	ComponentCPLD1 = "CPLD1"
)

// Well-known directories on the simulated NVOS host.
const (
	NOSImageDir = "/host/nos-images"
	FWImageDir  = "/host/fw-images"
)

// Config describes one simulated switch. The zero value is usable: every
// empty field takes the documented default.
type Config struct {
	// HostName is reported by NVUE and used as the TLS certificate's DNS
	// name. Default "nvos-sim".
	HostName string
	// Username and Password are the initial admin login for NVUE and SSH.
	// Default "admin" / "admin" (not expired).
	Username string
	Password hw.Secret
	// NVUEPort and SSHPort are the TCP ports to listen on; 0 picks a free
	// port (read it back with Endpoint and SSHPort).
	NVUEPort int
	SSHPort  int
	// NMXPort and GNMIPort are the ports of the NMX-C and gNMI gRPC
	// servers; 0 picks a free port (read it back with NMXPort, GNMIPort).
	NMXPort  int
	GNMIPort int
	// Certificate is the NVUE server's TLS certificate, e.g. one issued by
	// the rack simulator's CA. Nil generates a self-signed one for HostName
	// and the listen IP at Start (see Switch.CertPool).
	Certificate *tls.Certificate
	// Overlaps, if set, records the mutating NVUE requests as acting on
	// the device named HostName (the switch tray's node id in a fleet).
	Overlaps *overlap.Recorder

	// TimeScale multiplies every simulated duration below (0 means 1).
	// 0.001 turns a 60 s install into 60 ms.
	TimeScale float64
	// ActionDuration is how long a firmware install or image uninstall
	// action runs. Default 20 s.
	ActionDuration time.Duration
	// ImageInstallDuration is how long an NVOS image install runs before the
	// switch reboots into the new image. Default 60 s.
	ImageInstallDuration time.Duration
	// RebootDuration is how long NVUE and SSH are unreachable during a
	// reboot (image install, power cycle, factory reset). Default 120 s.
	RebootDuration time.Duration
	// RebootDelay is the time between an accepted power-cycle or factory
	// reset and the moment the switch goes down, and between the end of an
	// image install and its reboot (the hand-off status is visible then).
	// Default 10 s.
	RebootDelay time.Duration
	// ApplyDuration is how long a revision stays "applying". Default 2 s.
	ApplyDuration time.Duration
	// FabricConvergence is how long the fabric controller runs with a
	// topology before its control plane reports CONFIGURED. Default 30 s.
	FabricConvergence time.Duration
	// Fabric is the rack as the fabric manager sees it (GetTopologyInfo,
	// GetComputeNodeInfoList, GetSwitchNodeInfoList).
	Fabric FabricModel
	// ONIEUsername and ONIEPassword are the SSH login of the switch's ONIE
	// install environment, used while it has no NVOS (BootONIE). Default
	// "root" with no password, as ONIE ships.
	ONIEUsername string
	ONIEPassword hw.Secret

	// ExpirePasswordOnInstall resets the admin account to admin/admin with
	// an expired password when an NVOS image install reboots the switch.
	ExpirePasswordOnInstall bool

	// Platform identity reported by /nvue_v1/platform and chassis-location.
	ProductName   string // default "P3809"
	PartNumber    string // default "920-9K36F-00MV-7C0"
	SerialNumber  string // default "MT0000SIM001"
	ChassisSerial string // default "1821324000001"
	SlotNumber    int    // default 1
	TrayIndex     int    // default 0
	TopologyID    int    // default 1

	// Firmware maps component name (BMC, EROT, FPGA, BIOS, CPLD1) to its
	// running version. Missing components get a default version.
	Firmware map[string]string
	// Partition1 and Partition2 are the NVOS build ids installed on the two
	// partitions ("" = empty). Default partition1 "nvos-25.02.2553",
	// partition2 empty; partition 1 is current.
	Partition1 string
	Partition2 string

	// Logger receives request and fault logs; the zero value logs nothing.
	// Passwords are never logged.
	Logger zerolog.Logger
}

func (c Config) withDefaults() Config {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	defDur := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.HostName, "nvos-sim")
	def(&c.Username, "admin")
	def(&c.ONIEUsername, "root")
	if c.Password.IsZero() {
		c.Password = hw.NewSecret("admin")
	}
	def(&c.ProductName, "P3809")
	def(&c.PartNumber, "920-9K36F-00MV-7C0")
	def(&c.SerialNumber, "MT0000SIM001")
	def(&c.ChassisSerial, "1821324000001")
	def(&c.Partition1, "nvos-25.02.2553")
	if c.SlotNumber == 0 {
		c.SlotNumber = 1
	}
	if c.TopologyID == 0 {
		c.TopologyID = 1
	}
	if c.TimeScale <= 0 {
		c.TimeScale = 1
	}
	defDur(&c.ActionDuration, 20*time.Second)
	defDur(&c.ImageInstallDuration, 60*time.Second)
	defDur(&c.RebootDuration, 120*time.Second)
	defDur(&c.RebootDelay, 10*time.Second)
	defDur(&c.ApplyDuration, 2*time.Second)
	defDur(&c.FabricConvergence, 30*time.Second)
	fw := map[string]string{
		ComponentBMC:   "88.0002.1950",
		ComponentEROT:  "01.04.0008.0000",
		ComponentFPGA:  "0.1C",
		ComponentBIOS:  "0ACTV_00.01.015",
		ComponentCPLD1: "CPLD000133_REV3100",
	}
	for k, v := range c.Firmware {
		fw[k] = v
	}
	c.Firmware = fw
	return c
}

// scale converts a simulated duration to wall-clock time.
func (c Config) scale(d time.Duration) time.Duration {
	return time.Duration(float64(d) * c.TimeScale)
}
