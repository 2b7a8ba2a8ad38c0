/** A set that forgets its oldest entries past `max`, for ids remembered only as a convenience. */
export class RecentSet {
  private readonly items = new Set<string>();

  constructor(private readonly max: number) {}

  add(value: string): void {
    this.items.delete(value);
    this.items.add(value);
    if (this.items.size > this.max) this.items.delete(this.items.values().next().value as string);
  }

  has(value: string): boolean {
    return this.items.has(value);
  }
}
