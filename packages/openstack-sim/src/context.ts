/**
 * Who is calling, as the services see it after authentication: keystonemiddleware's headers in keystone mode, the
 * fake-project middleware in noauth mode.
 */
export interface CallerContext {
  /**
   * The scoped project; undefined for Neutron noauth with an `X-Project-Id` header (an admin context without project).
   */
  projectId: string | undefined;
  userId: string | undefined;
  roles: readonly string[];
  isAdmin: boolean;
}

/** Neutron noauth without headers: the fake project, elevated to admin. */
export const noauthNeutronContext: CallerContext = {
  projectId: 'fake_project_id',
  userId: undefined,
  roles: ['admin'],
  isAdmin: true,
};
