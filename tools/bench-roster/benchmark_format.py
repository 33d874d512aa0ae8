"""The Shift Scheduling Benchmark's text format, read into its sections: for the bench's helpers."""


def read_sections(text):
    """{section header: [fields of each data line]}, comments and blank lines left out."""
    sections, current = {}, None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("SECTION_"):
            current = line
            sections[current] = []
        else:
            sections[current].append([field.strip() for field in line.split(",")])
    return sections
