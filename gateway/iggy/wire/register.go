package wire

// ClientVersion is the prefix of every Register body: which protocol and
// SDK the client speaks.
type ClientVersion struct {
	Protocol   uint32
	SDKName    string
	SDKVersion string
}

// OurClientVersion is what our client announces.
func OurClientVersion() ClientVersion {
	return ClientVersion{Protocol: ProtocolVersion, SDKName: SDKName, SDKVersion: SDKVersion}
}

func (v ClientVersion) appendTo(dst []byte) []byte {
	dst = appendU32(dst, v.Protocol)
	dst = AppendName(dst, v.SDKName)
	return AppendName(dst, v.SDKVersion)
}

func (r *Reader) clientVersion() ClientVersion {
	return ClientVersion{
		Protocol:   r.U32("protocol version"),
		SDKName:    r.Name("sdk name"),
		SDKVersion: r.Name("sdk version"),
	}
}

// PasswordLogin is the Register body for a username/password login
// (command 40): the version prefix, username (Name), password (u8 length,
// may be empty), then a u32-prefixed client context.
type PasswordLogin struct {
	Version  ClientVersion
	Username string
	Password string
	Context  string
}

// AppendTo appends the body.
func (l *PasswordLogin) AppendTo(dst []byte) []byte {
	dst = l.Version.appendTo(dst)
	dst = AppendName(dst, l.Username)
	dst = appendString8(dst, l.Password)
	return appendString32(dst, l.Context)
}

// Decode parses the body; trailing bytes are ignored, as the official
// server ignores them.
func (l *PasswordLogin) Decode(b []byte) error {
	r := NewReader(b)
	l.Version = r.clientVersion()
	l.decodeTail(&r)
	return r.Err()
}

func (l *PasswordLogin) decodeTail(r *Reader) {
	l.Username = r.Name("username")
	l.Password = r.String8("password")
	l.Context = r.String32("context")
}

// TokenLogin is the Register body for a personal-access-token login
// (command 45): the version prefix, token (u8 length), then a u32-prefixed
// client context.
type TokenLogin struct {
	Version ClientVersion
	Token   string
	Context string
}

// AppendTo appends the body.
func (l *TokenLogin) AppendTo(dst []byte) []byte {
	dst = l.Version.appendTo(dst)
	dst = appendString8(dst, l.Token)
	return appendString32(dst, l.Context)
}

// Decode parses the body; trailing bytes are ignored.
func (l *TokenLogin) Decode(b []byte) error {
	r := NewReader(b)
	l.Version = r.clientVersion()
	l.decodeTail(&r)
	return r.Err()
}

func (l *TokenLogin) decodeTail(r *Reader) {
	l.Token = r.String8("token")
	l.Context = r.String32("context")
}

// RegisterShapes is what a server can read from a Register body. The header
// does not say which login kind a body is, so the server tries the password
// shape first and then the token shape, as the official server does; a
// body may parse as both.
type RegisterShapes struct {
	Version     ClientVersion
	Password    PasswordLogin
	HasPassword bool
	Token       TokenLogin
	HasToken    bool
}

// ParseRegister decodes the version prefix and then both credential shapes.
// It fails only when the prefix itself does not decode (the official server
// then evicts with EvictMalformedLogin); a body that matches neither shape
// returns HasPassword and HasToken both false.
func ParseRegister(body []byte) (RegisterShapes, error) {
	var s RegisterShapes
	r := NewReader(body)
	s.Version = r.clientVersion()
	if err := r.Err(); err != nil {
		return RegisterShapes{}, err
	}
	tail := r.Offset()

	pr := NewReader(body[tail:])
	s.Password.Version = s.Version
	s.Password.decodeTail(&pr)
	s.HasPassword = pr.Err() == nil
	if !s.HasPassword {
		s.Password = PasswordLogin{}
	}

	tr := NewReader(body[tail:])
	s.Token.Version = s.Version
	s.Token.decodeTail(&tr)
	s.HasToken = tr.Err() == nil
	if !s.HasToken {
		s.Token = TokenLogin{}
	}
	return s, nil
}

// LoginReply is the payload of a successful Register reply, after its
// result section.
type LoginReply struct {
	UserID uint32
	// Session must be non-zero; every later request carries it.
	Session               uint64
	ServerProtocolVersion uint32
	ServerVersion         string
}

// AppendTo appends the payload (without the result section).
func (l *LoginReply) AppendTo(dst []byte) []byte {
	dst = appendU32(dst, l.UserID)
	dst = appendU64(dst, l.Session)
	dst = appendU32(dst, l.ServerProtocolVersion)
	return AppendName(dst, l.ServerVersion)
}

// Decode parses the payload (without the result section).
func (l *LoginReply) Decode(b []byte) error {
	r := NewReader(b)
	l.UserID = r.U32("user id")
	l.Session = r.U64("session")
	l.ServerProtocolVersion = r.U32("server protocol version")
	l.ServerVersion = r.String8("server version")
	return r.Err()
}
