import { readFile } from "node:fs/promises";
import type { Request } from "./request";
import * as path from "path";
import "./side-effects";

/** Look up a user by id. */
export async function get_user(id: number, include_posts = false): Promise<User> {
  const url = `/users/${id}?posts=${include_posts ? "yes" : "no"}&x=${JSON.stringify({ a: "}" })}`;
  const brace = "}{"; const other = '{{'; // a comment with a } brace
  /* and a block comment with { braces } */
  if (/\}[{]/.test(url) && url.length / 2 > 1) {
    return { id, name: `nested ${`template ${"}"}`}` } as User;
  }
  return helper(id);
}

function helper(id: number): User {
  return { id, name: "x" };
}

/**
 * Send a message to a channel.
 * @param channel Where to send it.
 * @param text What to say.
 */
export function send_message(channel: string, text: string, urgent?: boolean): { ok: boolean } {
  const re = /[}]"/g;
  return { ok: text.replace(re, "") !== "}" };
}

export default function archive(ids: number[], reason: string | null): void {}

interface User {
  id: number;
  name: string;
}
