package messages

// JobType names the externally visible workflow a job runs. The zero value
// TypeNone marks internal jobs (batch children, bookkeeping jobs): a parent
// without a type is never aggregated from its children.
type JobType uint8

// Workflow types.
const (
	TypeNone JobType = iota
	TypeFirmwareUpdate
	TypeSwitchCertificate
	TypeSwitchMtlsDisable
	TypeSwitchSdnFactoryDefaultReset
	TypeSwitchFactoryDefaultReset
	TypeSwitchSystemPasswordUpdate
	TypeSwitchSystemImageUpdate
	TypeConfigureScaleUpFabricManagerV2
	TypeColdRebootSequence
	TypeSystemValidation
)

type jobTypeNames struct{ span, noun, plural string }

func (t JobType) names() jobTypeNames {
	switch t {
	case TypeFirmwareUpdate:
		return jobTypeNames{"firmware_update", "firmware update", "firmware updates"}
	case TypeSwitchCertificate:
		return jobTypeNames{"switch_certificate", "switch certificate install", "switch certificate installs"}
	case TypeSwitchMtlsDisable:
		return jobTypeNames{"switch_mtls_disable", "switch mTLS disable", "switch mTLS disables"}
	case TypeSwitchSdnFactoryDefaultReset:
		return jobTypeNames{"switch_sdn_factory_default_reset", "switch SDN factory-default reset", "switch SDN factory-default resets"}
	case TypeSwitchFactoryDefaultReset:
		return jobTypeNames{"switch_factory_default_reset", "switch factory-default reset", "switch factory-default resets"}
	case TypeSwitchSystemPasswordUpdate:
		return jobTypeNames{"switch_system_password_update", "switch system password update", "switch system password updates"}
	case TypeSwitchSystemImageUpdate:
		return jobTypeNames{"switch_system_image_update", "switch system image update", "switch system image updates"}
	case TypeConfigureScaleUpFabricManagerV2:
		return jobTypeNames{"configure_scale_up_fabric_manager_v2", "scale-up fabric configuration", "scale-up fabric configurations"}
	case TypeColdRebootSequence:
		return jobTypeNames{"cold_reboot_sequence", "cold reboot", "cold reboots"}
	case TypeSystemValidation:
		return jobTypeNames{"system_validation", "system validation scan", "system validation scans"}
	default:
		return jobTypeNames{"job", "job", "jobs"}
	}
}

// String returns the snake_case workflow name, also used as a metrics label.
func (t JobType) String() string { return t.names().span }

// BatchNoun returns the singular noun used in batch descriptions.
func (t JobType) BatchNoun() string { return t.names().noun }

// BatchNounPlural returns the plural noun used in batch descriptions.
func (t JobType) BatchNounPlural() string { return t.names().plural }
