// Package message owns the one byte layout of Iggy messages: the batch record.
//
// A batch record is a 256-byte batch header followed by message frames, each a
// 48-byte frame header, the payload and the user headers. The same bytes travel
// in a SendMessages request, are stored on disk by the embedded store, and come
// back in a poll reply, so every part of iggy-kafka that touches messages goes
// through this package instead of keeping its own copy of the layout.
//
// Layout (all integers little-endian):
//
//	batch header (256 bytes)
//	  0  partition_id     u64  set by the server when it admits the batch
//	  8  base_offset      u64  offset of the first message, set by the server
//	 16  base_timestamp   u64  append time in microseconds, set by the server
//	 24  origin_timestamp u64  smallest origin timestamp of the messages
//	 32  batch_length     u64  256 + the bytes of every frame
//	 40  batch_checksum   u64  see below
//	 48  message_count    u32
//	 52  reserved         204 bytes, zero
//	frame header (48 bytes), then payload, then user headers
//	  0  checksum         u64  XXH3-64 (seed 0) over frame bytes 8..end
//	  8  id               16 bytes, a u128 in little-endian order
//	 24  offset_delta     u32  index of the frame in the batch
//	 28  timestamp_delta  u32  origin timestamp minus the batch origin_timestamp
//	 32  user_headers_len u32
//	 36  payload_len      u32
//	 40  reserved         u64, zero
//
// The batch checksum is XXH3-64 over the header fields partition_id through
// message_count (44 bytes, the checksum field itself skipped) followed by the
// 8-byte checksum field of every frame in order. It therefore costs O(frames),
// not O(bytes): the bytes of a frame are bound through its own checksum, which
// is why Validate checks every frame before trusting the batch checksum, and
// why Stamp can restamp a stored batch without touching its payloads.
//
// The types to know are Builder, which producers use to write a batch with no
// allocation per message, and Iter (from Frames), which readers use to walk
// one. Validate is the server's admission check; its errors are sentinels that
// map one-to-one onto Iggy error codes (see Code). Stamp and AppendSlice are
// the two rewrites a store performs: assigning offsets on append, and cutting
// a stored batch down to the frames a poll asked for.
package message
