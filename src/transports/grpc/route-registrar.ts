import type { ConnectRouter } from "@connectrpc/connect";

/**
 * Registers services on the gRPC port's connect-node router (gRPC, gRPC-Web and Connect): the rate-limit
 * and health services, and the APIs that plug in beside them (users, migrations).
 */
export type RouteRegistrar = (router: ConnectRouter) => void;
