/** A tree of folders. */
interface Folder {
  name: string;
  children?: Folder[];
}

/** Create folders. */
export declare function make_folders(root: Folder): void;
