// This file names, in package mcpbind, the types and values that moved to
// package gate, the transport-free core, so that code written against
// mcpbind keeps compiling. They are the same types: see their documentation
// there.

package mcpbind

import "github.com/chartgate/chartgate/gate"

// Types of package gate.
type (
	Approval           = gate.Approval
	ApprovalGrant      = gate.ApprovalGrant
	Binding            = gate.Binding
	Bytes              = gate.Bytes
	CallLimit          = gate.CallLimit
	Change             = gate.Change
	Feed               = gate.Feed
	Grant              = gate.Grant
	Keeper             = gate.Keeper
	Lister             = gate.Lister
	MemoryStore        = gate.MemoryStore
	MemoryStoreOptions = gate.MemoryStoreOptions
	PendingApproval    = gate.PendingApproval
	Ref                = gate.Ref
	Refusal            = gate.Refusal
	StateMCP           = gate.StateMCP
	Step               = gate.Step
	Store              = gate.Store
	Transition         = gate.Transition
	TransitionResult   = gate.TransitionResult
	Value              = gate.Value
	ValueStore         = gate.ValueStore
	Watcher            = gate.Watcher
	FuncWatcher        = gate.FuncWatcher
	Workflow           = gate.Workflow
	WorkflowInfo       = gate.WorkflowInfo
	VersionError       = gate.VersionError
	WorkflowStatus     = gate.WorkflowStatus
)

// Functions of package gate.
var (
	ApprovalToken  = gate.ApprovalToken
	IsApprovalID   = gate.IsApprovalID
	NewFeed        = gate.NewFeed
	NewMemoryStore = gate.NewMemoryStore
)

// Errors of package gate, matched with errors.Is.
var (
	ErrApprovalExpired   = gate.ErrApprovalExpired
	ErrApprovalToken     = gate.ErrApprovalToken
	ErrApprovalUsed      = gate.ErrApprovalUsed
	ErrConflict          = gate.ErrConflict
	ErrFeedClosed        = gate.ErrFeedClosed
	ErrNoListing         = gate.ErrNoListing
	ErrNoPendingApproval = gate.ErrNoPendingApproval
	ErrStoreFull         = gate.ErrStoreFull
	ErrUnknownApproval   = gate.ErrUnknownApproval
	ErrUnknownWorkflow   = gate.ErrUnknownWorkflow
	ErrWorkflowBusy      = gate.ErrWorkflowBusy
	ErrWorkflowExpired   = gate.ErrWorkflowExpired
)

// Constants of package gate.
const (
	ChannelCommand       = gate.ChannelCommand
	ChannelElicitation   = gate.ChannelElicitation
	ChannelExpiry        = gate.ChannelExpiry
	ChannelInputRequired = gate.ChannelInputRequired
	ChannelPage          = gate.ChannelPage
	CodeCallLimit        = gate.CodeCallLimit
	CodeEventRefused     = gate.CodeEventRefused
	CodeForbidden        = gate.CodeForbidden
	CodeRateLimited      = gate.CodeRateLimited
	CodeStateNotSaved    = gate.CodeStateNotSaved
	CodeTooLarge         = gate.CodeTooLarge
	CodeUnknownWorkflow  = gate.CodeUnknownWorkflow
	CodeWorkflowBusy     = gate.CodeWorkflowBusy
	CodeWorkflowError    = gate.CodeWorkflowError
	CodeWorkflowExpired  = gate.CodeWorkflowExpired
	CodeWorkflowRequired = gate.CodeWorkflowRequired
	EventApprove         = gate.EventApprove
	EventReject          = gate.EventReject
	FeedReadyWait        = gate.FeedReadyWait
)
