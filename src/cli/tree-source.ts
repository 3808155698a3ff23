/** The parts of a group, an identity and a binding that an export writes. */
export interface TreeGroup {
  uid: string;
  name: string;
  description?: string | undefined;
  parentUid: string | null;
}
export interface TreeIdentity extends TreeGroup {
  claimMatch?: object | undefined;
}
export interface TreeBinding {
  uid: string;
  parentUid: string;
  identity: { uid: string };
  role: { uid: string; name: string };
  /** A Date from the services, RFC 3339 text from the API. */
  expireTime?: Date | string | undefined;
  notBefore?: Date | string | undefined;
}

/** Where an export reads the tree: the services here, or a server's API. */
export interface TreeSource {
  /** @throws RpcError NOT_FOUND (or a refusal from the API) for a group not there. */
  group(uid: string): Promise<TreeGroup>;
  /** Everything strictly below `uid`, every page. */
  below(uid: string): Promise<[TreeGroup[], TreeIdentity[], TreeBinding[]]>;
}
