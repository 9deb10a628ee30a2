package wire

// User statuses.
const (
	UserStatusActive   uint8 = 1
	UserStatusInactive uint8 = 2
)

// UserRequest is the body [user Identifier] of get_user and delete_user.
type UserRequest struct {
	User Identifier
}

// AppendTo appends the body.
func (q *UserRequest) AppendTo(dst []byte) []byte { return q.User.AppendTo(dst) }

// Decode parses the body.
func (q *UserRequest) Decode(b []byte) error {
	r := NewReader(b)
	q.User = r.Identifier("user")
	return r.Err()
}

// CreateUser is the create_user body. Permissions nil means none.
type CreateUser struct {
	Username    string
	Password    string
	Status      uint8
	Permissions *Permissions
	Options     []byte
}

// AppendTo appends the body.
func (q *CreateUser) AppendTo(dst []byte) []byte {
	dst = AppendName(dst, q.Username)
	dst = appendString8(dst, q.Password)
	dst = append(dst, q.Status)
	dst = appendOptionalPermissions(dst, q.Permissions)
	return append(dst, q.Options...)
}

// Decode parses the body.
func (q *CreateUser) Decode(b []byte) error {
	r := NewReader(b)
	q.Username = r.Name("username")
	q.Password = r.String8("password")
	q.Status = r.U8("status")
	q.Permissions = r.optionalPermissions("permissions")
	q.Options = r.OptionsTail("options")
	return r.Err()
}

// UpdateUser is the update_user body; each field is sent only when its
// Has flag is set.
type UpdateUser struct {
	User        Identifier
	HasUsername bool
	Username    string
	HasStatus   bool
	Status      uint8
	Options     []byte
}

// AppendTo appends the body.
func (q *UpdateUser) AppendTo(dst []byte) []byte {
	dst = q.User.AppendTo(dst)
	dst = appendBool(dst, q.HasUsername)
	if q.HasUsername {
		dst = AppendName(dst, q.Username)
	}
	dst = appendBool(dst, q.HasStatus)
	if q.HasStatus {
		dst = append(dst, q.Status)
	}
	return append(dst, q.Options...)
}

// Decode parses the body.
func (q *UpdateUser) Decode(b []byte) error {
	r := NewReader(b)
	*q = UpdateUser{User: r.Identifier("user")}
	if q.HasUsername = r.Bool("has username"); q.HasUsername {
		q.Username = r.Name("username")
	}
	if q.HasStatus = r.Bool("has status"); q.HasStatus {
		q.Status = r.U8("status")
	}
	q.Options = r.OptionsTail("options")
	return r.Err()
}

// UpdatePermissions is the update_permissions body; nil removes them.
type UpdatePermissions struct {
	User        Identifier
	Permissions *Permissions
}

// AppendTo appends the body.
func (q *UpdatePermissions) AppendTo(dst []byte) []byte {
	return appendOptionalPermissions(q.User.AppendTo(dst), q.Permissions)
}

// Decode parses the body.
func (q *UpdatePermissions) Decode(b []byte) error {
	r := NewReader(b)
	q.User = r.Identifier("user")
	q.Permissions = r.optionalPermissions("permissions")
	return r.Err()
}

// ChangePassword is the change_password body.
type ChangePassword struct {
	User            Identifier
	CurrentPassword string
	NewPassword     string
}

// AppendTo appends the body.
func (q *ChangePassword) AppendTo(dst []byte) []byte {
	return appendString8(appendString8(q.User.AppendTo(dst), q.CurrentPassword), q.NewPassword)
}

// Decode parses the body.
func (q *ChangePassword) Decode(b []byte) error {
	r := NewReader(b)
	q.User = r.Identifier("user")
	q.CurrentPassword = r.String8("current password")
	q.NewPassword = r.String8("new password")
	return r.Err()
}

// User is one user in a reply.
type User struct {
	ID        uint32
	CreatedAt uint64
	Status    uint8
	Username  string
	Options   []byte
}

// AppendTo appends the user entry.
func (u *User) AppendTo(dst []byte) []byte {
	dst = appendU64(appendU32(dst, u.ID), u.CreatedAt)
	dst = AppendName(append(dst, u.Status), u.Username)
	return AppendOptionsPrefixed(dst, u.Options)
}

// Decode parses one user entry.
func (u *User) Decode(b []byte) error {
	r := NewReader(b)
	u.read(&r)
	return r.Err()
}

func (u *User) read(r *Reader) {
	u.ID = r.U32("user id")
	u.CreatedAt = r.U64("created at")
	u.Status = r.U8("status")
	u.Username = r.Name("username")
	u.Options = r.OptionsPrefixed("user options")
}

// UserDetails is the get_user and create_user reply.
type UserDetails struct {
	User
	Permissions *Permissions
}

// AppendTo appends the reply. No permissions travel as four zero bytes.
func (u *UserDetails) AppendTo(dst []byte) []byte {
	dst = u.User.AppendTo(dst)
	if u.Permissions == nil {
		return append(dst, 0, 0, 0, 0)
	}
	return appendOptionalPermissions(dst, u.Permissions)
}

// Decode parses the reply; the three padding bytes after a zero flag may
// be missing, as the official Go SDK never reads them.
func (u *UserDetails) Decode(b []byte) error {
	r := NewReader(b)
	u.User.read(&r)
	u.Permissions = nil
	if r.U8("permissions flag") == 1 {
		u.Permissions = r.permissionsBlock("permissions")
	}
	return r.Err()
}

// UserList is the get_users reply: entries back to back.
type UserList []User

// AppendTo appends the entries.
func (l *UserList) AppendTo(dst []byte) []byte {
	for i := range *l {
		dst = (*l)[i].AppendTo(dst)
	}
	return dst
}

// Decode parses entries until the body ends.
func (l *UserList) Decode(b []byte) error {
	r := NewReader(b)
	*l = nil
	for r.Len() > 0 && r.Err() == nil {
		var u User
		u.read(&r)
		*l = append(*l, u)
	}
	return r.Err()
}

// CreatePersonalAccessToken is the create PAT body. Expiry is 0 for the
// server default, Unlimited for never, else a duration in µs.
type CreatePersonalAccessToken struct {
	Name   string
	Expiry uint64
}

// AppendTo appends the body.
func (q *CreatePersonalAccessToken) AppendTo(dst []byte) []byte {
	return appendU64(AppendName(dst, q.Name), q.Expiry)
}

// Decode parses the body.
func (q *CreatePersonalAccessToken) Decode(b []byte) error {
	r := NewReader(b)
	q.Name = r.Name("name")
	q.Expiry = r.U64("expiry")
	return r.Err()
}

// DeletePersonalAccessToken is the delete PAT body.
type DeletePersonalAccessToken struct {
	Name string
}

// AppendTo appends the body.
func (q *DeletePersonalAccessToken) AppendTo(dst []byte) []byte { return AppendName(dst, q.Name) }

// Decode parses the body.
func (q *DeletePersonalAccessToken) Decode(b []byte) error {
	r := NewReader(b)
	q.Name = r.Name("name")
	return r.Err()
}

// RawToken is the create PAT reply: the token, shown once.
type RawToken struct {
	Token string
}

// AppendTo appends the reply.
func (t *RawToken) AppendTo(dst []byte) []byte { return AppendName(dst, t.Token) }

// Decode parses the reply.
func (t *RawToken) Decode(b []byte) error {
	r := NewReader(b)
	t.Token = r.Name("token")
	return r.Err()
}

// PersonalAccessToken is one entry of the PAT list.
type PersonalAccessToken struct {
	Name     string
	ExpiryAt uint64 // µs since the epoch; 0 means never
}

// PersonalAccessTokenList is the list PAT reply: entries back to back.
type PersonalAccessTokenList []PersonalAccessToken

// AppendTo appends the entries.
func (l *PersonalAccessTokenList) AppendTo(dst []byte) []byte {
	for _, t := range *l {
		dst = appendU64(AppendName(dst, t.Name), t.ExpiryAt)
	}
	return dst
}

// Decode parses entries until the body ends.
func (l *PersonalAccessTokenList) Decode(b []byte) error {
	r := NewReader(b)
	*l = nil
	for r.Len() > 0 && r.Err() == nil {
		t := PersonalAccessToken{Name: r.Name("token name"), ExpiryAt: r.U64("expiry at")}
		*l = append(*l, t)
	}
	return r.Err()
}
