package coordinator

// DecodeAnnouncement reads one `coordinator_owners` message, for readers outside the gateway
// (the operator commands); corrupt bytes give an error, never a panic.
func DecodeAnnouncement(b []byte) (Announcement, error) { return decodeAnnouncement(b) }
