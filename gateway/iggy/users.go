package iggy

import (
	"context"
	"fmt"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// CreateUser creates a user; perms nil means no permissions. status is
// wire.UserStatusActive or wire.UserStatusInactive.
func (a api) CreateUser(ctx context.Context, username, password string, status uint8, perms *wire.Permissions) (*wire.UserDetails, error) {
	if err := checkName(username, wire.InvalidUsername); err != nil {
		return nil, err
	}
	out := new(wire.UserDetails)
	req := &wire.CreateUser{Username: username, Password: password, Status: status, Permissions: perms}
	if err := a.request(ctx, wire.CmdCreateUser, req, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// GetUser returns a user with its permissions, or wire.ResourceNotFound.
func (a api) GetUser(ctx context.Context, user wire.Identifier) (*wire.UserDetails, error) {
	out := new(wire.UserDetails)
	if err := a.request(ctx, wire.CmdGetUser, &wire.UserRequest{User: user}, out, wire.ResourceNotFound); err != nil {
		return nil, err
	}
	return out, nil
}

// GetUsers lists every user.
func (a api) GetUsers(ctx context.Context) ([]wire.User, error) {
	var out wire.UserList
	if err := a.request(ctx, wire.CmdGetUsers, nil, &out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// UpdateUser changes a user's name and/or status; nil leaves a field as is.
func (a api) UpdateUser(ctx context.Context, user wire.Identifier, username *string, status *uint8) error {
	req := &wire.UpdateUser{User: user}
	if username != nil {
		if err := checkName(*username, wire.InvalidUsername); err != nil {
			return err
		}
		req.HasUsername, req.Username = true, *username
	}
	if status != nil {
		req.HasStatus, req.Status = true, *status
	}
	return a.request(ctx, wire.CmdUpdateUser, req, nil, nil)
}

// DeleteUser deletes a user (not the root user).
func (a api) DeleteUser(ctx context.Context, user wire.Identifier) error {
	return a.request(ctx, wire.CmdDeleteUser, &wire.UserRequest{User: user}, nil, nil)
}

// ChangePassword replaces a user's password, given the current one.
func (a api) ChangePassword(ctx context.Context, user wire.Identifier, current, next string) error {
	req := &wire.ChangePassword{User: user, CurrentPassword: current, NewPassword: next}
	return a.request(ctx, wire.CmdChangePassword, req, nil, nil)
}

// UpdatePermissions replaces a user's permissions; nil removes them.
func (a api) UpdatePermissions(ctx context.Context, user wire.Identifier, perms *wire.Permissions) error {
	return a.request(ctx, wire.CmdUpdatePermissions, &wire.UpdatePermissions{User: user, Permissions: perms}, nil, nil)
}

// CreateToken creates a personal access token of the calling user and
// returns the raw token (the server shows it only once). expiry 0 takes the
// server default; a negative expiry never expires.
func (a api) CreateToken(ctx context.Context, name string, expiry time.Duration) (string, error) {
	if err := checkName(name, wire.InvalidPersonalAccessTokenName); err != nil {
		return "", err
	}
	micros := uint64(0)
	switch {
	case expiry < 0:
		micros = wire.Unlimited
	case expiry > 0:
		micros = uint64(expiry / time.Microsecond)
	}
	var out wire.RawToken
	if err := a.request(ctx, wire.CmdCreatePersonalAccessToken, &wire.CreatePersonalAccessToken{Name: name, Expiry: micros}, &out, nil); err != nil {
		return "", err
	}
	if out.Token == "" {
		return "", fmt.Errorf("iggy: empty token in reply: %w", ErrProtocol)
	}
	return out.Token, nil
}

// GetTokens lists the calling user's personal access tokens.
func (a api) GetTokens(ctx context.Context) ([]wire.PersonalAccessToken, error) {
	var out wire.PersonalAccessTokenList
	if err := a.request(ctx, wire.CmdGetPersonalAccessTokens, nil, &out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteToken deletes one of the calling user's tokens by name.
func (a api) DeleteToken(ctx context.Context, name string) error {
	return a.request(ctx, wire.CmdDeletePersonalAccessToken, &wire.DeletePersonalAccessToken{Name: name}, nil, nil)
}
