import { create } from "@bufbuild/protobuf";
import type { AccessGuard } from "../../auth/authenticator.js";
import {
  DeleteUserResponseSchema,
  ListUsersResponseSchema,
  UserSchema,
  UserService as UserServiceDescriptor,
} from "../../gen/ratelimitd/users/v1/users_pb.js";
import type { User } from "../../users/user.js";
import { userIdOf } from "../../users/user-input.js";
import type { UserService } from "../../users/user-service.js";
import { guarded } from "./call-credentials.js";
import type { RouteRegistrar } from "./connect-routes.js";

/**
 * `ratelimitd.users.v1.UserService` over gRPC, gRPC-Web and Connect: the same {@link UserService} as the
 * REST routes, so validation and error texts are the same (statuses: INVALID_ARGUMENT, ALREADY_EXISTS,
 * NOT_FOUND, INTERNAL, mapped in `grpc-status.ts`). With `guard` (USERS_REQUIRE_AUTH), every call needs
 * the credentials of a `manage_options` user.
 */
export function userServiceRoutes(service: UserService, guard?: AccessGuard): RouteRegistrar {
  const check = guarded(guard);
  return (router) => {
    router.service(UserServiceDescriptor, {
      createUser: check(async (request) =>
        userMessage(
          await service.create({ name: request.name, email: request.email, password: request.password }),
        ),
      ),
      updateUser: check(async (request) =>
        userMessage(
          await service.update(userIdOf(request.id), {
            name: request.name,
            email: request.email,
            password: request.password,
          }),
        ),
      ),
      deleteUser: check(async (request) => {
        await service.delete(userIdOf(request.id));
        return create(DeleteUserResponseSchema);
      }),
      getUser: check(async (request) => userMessage(await service.get(userIdOf(request.id)))),
      listUsers: check(async (request) => {
        const page = service.pageOf(request.limit, request.offset === 0 ? undefined : request.offset);
        const { users, total } = await service.list(page);
        return create(ListUsersResponseSchema, { users: users.map(userMessage), totalCount: BigInt(total) });
      }),
    });
  };
}

function userMessage(user: User) {
  return create(UserSchema, { id: BigInt(user.id), name: user.name, email: user.email });
}
