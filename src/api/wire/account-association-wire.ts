import type { AccountAssociation } from '../../resources/account-associations/account-association.js';
import { ts } from './time.js';

/** The clouds that are associated; an unset one is omitted, as proto3 JSON omits a message. */
function clouds(a: AccountAssociation) {
  return {
    ...(a.amazon ? { amazon: a.amazon } : {}),
    ...(a.google ? { google: a.google } : {}),
    ...(a.azure ? { azure: a.azure } : {}),
  };
}

/** v2: the uid is the group's uid. */
export function accountAssociationV2(a: AccountAssociation) {
  return {
    uid: a.uid,
    name: a.name,
    description: a.description,
    ...clouds(a),
    createTime: ts(a.createTime),
    updateTime: ts(a.updateTime),
  };
}

/** v1 `AccountAssociations` names the group `group` and has no timestamps. */
export function accountAssociationV1(a: AccountAssociation) {
  return { group: a.uid, name: a.name, description: a.description, ...clouds(a) };
}
