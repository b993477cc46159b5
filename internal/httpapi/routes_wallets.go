package httpapi

import (
	"sync"

	"github.com/paymentsd/paymentsd/internal/wallets"
)

func init() { routeGroups = append(routeGroups, (*Server).walletRoutes) }

// walletServices holds each server's embedded-wallet service, so the
// accounts service (provisioning) and the wallet routes reach the same one.
var walletServices sync.Map // *Server → *wallets.Service

// walletService returns the server's embedded-wallet service, creating it
// on first use with the sealer of the server's options.
func (s *Server) walletService() *wallets.Service {
	if svc, ok := walletServices.Load(s); ok {
		return svc.(*wallets.Service)
	}
	svc, _ := walletServices.LoadOrStore(s, wallets.New(s.db, s.opts.WalletSealer, s.log))
	return svc.(*wallets.Service)
}

// walletRoutes: embedded wallets, their credentials, sessions, signed
// retries, export and delegated keys (issue 17).
func (s *Server) walletRoutes() {}
