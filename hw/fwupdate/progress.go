package fwupdate

// The beginnings of the progress descriptions a firmware update reports,
// stage by stage, in order: clients that draw progress (rmsctl's job
// bars) recognise the stage by them.
const (
	ProgressUploading  = "Uploading "
	ProgressPolling    = "Polling firmware task "
	ProgressActivating = "Activating firmware on "
)
