import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { type UsersAccess, type UsersOperation, usersRefusalText } from "../../auth/users-access.js";
import {
  DeleteUserResponseSchema,
  ListUsersResponseSchema,
  UserSchema,
  UserService as UserServiceDescriptor,
} from "../../gen/ratelimitd/users/v1/users_pb.js";
import { credentialsOfCall, refusalError } from "../../transports/grpc/call-credentials.js";
import type { RouteRegistrar } from "../../transports/grpc/route-registrar.js";
import type { User } from "../user.js";
import { userIdOf } from "../user-input.js";
import type { UserService } from "../user-service.js";

/**
 * `ratelimitd.users.v1.UserService` over gRPC, gRPC-Web and Connect: the same {@link UserService} as the
 * REST routes, so validation and error texts are the same (statuses: INVALID_ARGUMENT, ALREADY_EXISTS,
 * NOT_FOUND, INTERNAL, mapped in `transports/grpc-status.ts`), and the same {@link UsersAccess} decides
 * which calls need `manage_options` credentials in the `authorization` metadata.
 */
export function userServiceRoutes(service: UserService, access: UsersAccess): RouteRegistrar {
  const check = async (operation: UsersOperation, context: HandlerContext) => {
    const decision = await access(operation, credentialsOfCall(context));
    if (!decision.allowed) throw refusalError(decision, usersRefusalText(decision));
  };
  return (router) => {
    router.service(UserServiceDescriptor, {
      async createUser(request, context) {
        await check({ kind: "create" }, context);
        return userMessage(
          await service.create({ name: request.name, email: request.email, password: request.password }),
        );
      },
      async updateUser(request, context) {
        const id = userIdOf(request.id);
        await check({ kind: "update", userId: id }, context);
        return userMessage(
          await service.update(id, { name: request.name, email: request.email, password: request.password }),
        );
      },
      async deleteUser(request, context) {
        const id = userIdOf(request.id);
        await check({ kind: "delete", userId: id }, context);
        await service.delete(id);
        return create(DeleteUserResponseSchema);
      },
      async getUser(request, context) {
        await check({ kind: "get" }, context);
        return userMessage(await service.get(userIdOf(request.id)));
      },
      async listUsers(request, context) {
        await check({ kind: "list" }, context);
        const page = service.pageOf(request.limit, request.offset === 0 ? undefined : request.offset);
        const { users, total } = await service.list(page);
        return create(ListUsersResponseSchema, { users: users.map(userMessage), totalCount: BigInt(total) });
      },
    });
  };
}

function userMessage(user: User) {
  return create(UserSchema, { id: BigInt(user.id), name: user.name, email: user.email });
}
