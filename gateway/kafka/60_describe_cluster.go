package kafka

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeCluster: v0-1
//
// Behavior:
//   - Lists the same brokers and controller as Metadata (the live fleet, fleet.go).
//   - EndpointType 2 (controllers, v1) is UNSUPPORTED_ENDPOINT_TYPE: gateways have no separate
//     controller quorum.
//
// Not implemented:
// * Authorized operations (left unset), v2 (fenced brokers).
func init() { regKey(describeClusterKey, 0, 1) }

func (c *conn) handleDescribeCluster(req *request) (kmsg.Response, error) {
	dreq := req.kreq.(*kmsg.DescribeClusterRequest)
	resp := dreq.ResponseKind().(*kmsg.DescribeClusterResponse)
	if dreq.Version >= 1 && dreq.EndpointType == 2 {
		resp.ErrorCode = kerr.UnsupportedEndpointType.Code
		req.setErr(resp.ErrorCode)
		return resp, nil
	}
	resp.EndpointType = 1
	resp.ClusterID = c.s.cfg.ClusterID
	view := c.s.brokerView()
	resp.ControllerID = view.controller
	for _, b := range view.listed {
		sb := kmsg.NewDescribeClusterResponseBroker()
		sb.NodeID, sb.Host, sb.Port = b.NodeID, b.Host, b.Port
		resp.Brokers = append(resp.Brokers, sb)
	}
	return resp, nil
}
